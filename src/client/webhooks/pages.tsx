/**
 * The Webhooks page of an organization (`/orgs/<id>/webhooks`, admins): endpoints with their
 * events and state; reveal (and hide), copy and rotate a secret; send a test; enable, disable,
 * delete (confirmed); a form to add one with an event picker, the server's field errors beside
 * their fields; and an endpoint's delivery log: each delivery's attempts with status code,
 * duration and error, a status filter, "load more", and retry. It reads the state and dispatches
 * the events of webhooks/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { Submit, useApp } from '../ui.js';
import { orgPath } from '../orgs/events.js';
import { webhooksOrgIdOf, type DeliveryFilter, type Webhook, type WebhookDelivery } from './events.js';

const ALL = '*';
const when = (iso: string) => new Date(iso).toLocaleString();

function Secret({ webhook, secret }: { webhook: Webhook; secret: string | undefined }) {
  const { state, dispatch } = useApp();
  const id = `webhook-secret-${webhook.id}`;
  return (
    <div class="key-copy">
      {secret ? (
        <>
          <input id={id} class="webhook-secret" readOnly value={secret} aria-label={`Signing secret of ${webhook.url}`} spellcheck={false}
            onFocus={(e) => e.currentTarget.select()} />
          <button type="button" class="secondary hide-secret" onClick={() => dispatch(['webhooks/hide', webhook.id])}>Hide</button>
        </>
      ) : (
        <button type="button" class="secondary reveal-secret" disabled={state.busy} onClick={() => dispatch(['webhooks/reveal', webhook.id])}>Reveal secret</button>
      )}
      <button type="button" class="secondary rotate-secret" disabled={state.busy} onClick={() => {
        if (confirm('Make a new secret? The current one keeps signing for 24 hours: move the receiver to the new one before then.')) dispatch(['webhooks/rotate', webhook.id]);
      }}>Rotate</button>
    </div>
  );
}

function Endpoint({ webhook }: { webhook: Webhook }) {
  const { state, dispatch } = useApp();
  const page = state.webhooksPage!;
  const showing = page.log?.webhookId === webhook.id;
  return (
    <li class="webhook" data-webhook={webhook.id}>
      <h3><code>{webhook.url}</code></h3>
      {webhook.description && <p>{webhook.description}</p>}
      <p class="muted">
        {webhook.events.includes(ALL) ? 'Every event type' : webhook.events.join(', ')}
        {' · '}
        <span data-field="state">{webhook.enabled ? 'enabled' : webhook['disabled-reason'] === 'failing' ? 'disabled after failing deliveries' : 'disabled'}</span>
      </p>
      <Secret webhook={webhook} secret={page.secrets[webhook.id]} />
      <p>
        <button type="button" class="secondary send-test" disabled={state.busy || !webhook.enabled} onClick={() => dispatch(['webhooks/test', webhook.id])}>Send test</button>{' '}
        <button type="button" class="secondary show-log" aria-expanded={showing}
          onClick={() => dispatch(showing ? ['webhooks/hide-log'] : ['webhooks/show-log', webhook.id, ''])}>{showing ? 'Hide deliveries' : 'Deliveries'}</button>{' '}
        <button type="button" class="secondary toggle-webhook" disabled={state.busy}
          onClick={() => dispatch(['webhooks/set-enabled', webhook.id, !webhook.enabled])}>{webhook.enabled ? 'Disable' : 'Enable'}</button>{' '}
        <button type="button" class="danger delete-webhook" disabled={state.busy} onClick={() => {
          if (confirm(`Delete the endpoint ${webhook.url}? Nothing more is sent to it and its delivery log goes with it.`)) dispatch(['webhooks/delete', webhook.id]);
        }}>Delete</button>
      </p>
      {showing && <Deliveries />}
    </li>
  );
}

function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">no attempt yet</span>;
  return (
    <ol class="attempts">
      {delivery.attempts.map((a) => (
        <li key={a.at} data-status-code={a['status-code'] ?? ''}>
          {when(a.at)}: <strong>{a['status-code'] ?? 'no response'}</strong> in {a['duration-ms']} ms{a.error ? ` (${a.error})` : ''}
          {a.response && <details><summary>Response</summary><pre>{a.response}</pre></details>}
        </li>
      ))}
    </ol>
  );
}

function Deliveries() {
  const { state, dispatch } = useApp();
  const log = state.webhooksPage!.log!;
  return (
    <section class="deliveries" aria-label="Deliveries">
      <div class="field">
        <label for="delivery-filter">Show</label>
        <select id="delivery-filter" value={log.filter} onChange={(e) => dispatch(['webhooks/show-log', log.webhookId, e.currentTarget.value as DeliveryFilter])}>
          <option value="">all deliveries</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
      </div>
      {!log.items ? <p class="muted">Loading deliveries…</p> : log.items.length === 0 ? <p class="muted no-deliveries">No deliveries in the last 30 days.</p> : (
        <table class="delivery-log">
          <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th /></tr></thead>
          <tbody>
            {log.items.map((d) => (
              <tr key={d.id} data-delivery={d.id} data-status={d.status}>
                <td>{d['event-type']}<br /><code class="muted">{d['message-id']}</code><br /><span class="muted">{when(d['created-at'])}</span></td>
                <td>{d.status}{d['next-attempt-at'] && <><br /><span class="muted">next: {when(d['next-attempt-at'])}</span></>}</td>
                <td><Attempts delivery={d} /></td>
                <td>{d.status !== 'pending' && (
                  <button type="button" class="secondary retry-delivery" disabled={state.busy} onClick={() => dispatch(['webhooks/retry', d.id])}>Retry</button>
                )}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {log.nextCursor && <p><button type="button" class="secondary more-deliveries" onClick={() => dispatch(['webhooks/more'])}>Load more</button></p>}
    </section>
  );
}

function CreateForm() {
  const { state, dispatch } = useApp();
  const page = state.webhooksPage!;
  const errors = page.fieldErrors;
  const error = (field: string) => errors[field] && <small class="field-error" id={`webhook-${field}-error`} data-error-for={field}>{errors[field]}</small>;
  const described = (field: string) => (errors[field] ? `webhook-${field}-error` : undefined);
  return (
    <form key={page.formResets} id="create-webhook" aria-busy={state.busy} onSubmit={(e) => {
      e.preventDefault();
      const data = new FormData(e.currentTarget);
      const events = data.getAll('events').map(String);
      dispatch(['webhooks/create', { url: String(data.get('url') ?? ''), description: String(data.get('description') ?? ''), events: events.includes(ALL) ? [ALL] : events }]);
    }}>
      <div class="field">
        <label for="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" required maxLength={2000} placeholder="https://example.com/webhooks"
          aria-invalid={errors.url ? true : undefined} aria-describedby={described('url')} />
        {error('url')}
      </div>
      <div class="field">
        <label for="webhook-description">Description</label>
        <input id="webhook-description" name="description" maxLength={500} placeholder="what it is for, e.g. CRM sync"
          aria-invalid={errors.description ? true : undefined} aria-describedby={described('description')} />
        {error('description')}
      </div>
      <fieldset class="field" aria-describedby={described('events')}>
        <legend>Events</legend>
        <label><input type="checkbox" name="events" value={ALL} /> All event types, those added later included</label>
        {(page.eventTypes ?? []).filter((t) => t !== 'webhook.test').map((type) => (
          <label key={type}><input type="checkbox" name="events" value={type} /> <code>{type}</code></label>
        ))}
        {error('events')}
      </fieldset>
      <Submit>Add endpoint</Submit>
    </form>
  );
}

export function WebhooksPage() {
  const { state, dispatch } = useApp();
  const id = webhooksOrgIdOf(location.pathname);
  const page = state.webhooksPage?.orgId === id ? state.webhooksPage : undefined;
  // each visit starts afresh (and forgets the secrets shown on the last one)
  useEffect(() => {
    if (id) dispatch(['webhooks/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') {
    return <><h1>Webhooks</h1><p id="org-missing" class="error" role="alert">This organization does not exist, or you are not a member.</p></>;
  }
  if (!page?.org) return <p class="muted">Loading…</p>;
  const org = page.org;
  const back = (
    <p><a href={orgPath(org.id)} id="back-to-org" onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['router/navigate', { route: 'org', path: orgPath(org.id) }]);
    }}>← {org.name}</a></p>
  );
  if (org.role === 'member') {
    return <>{back}<h1>Webhooks</h1><p id="webhooks-forbidden" class="error" role="alert">Only admins and owners manage the webhooks of {org.name}.</p></>;
  }
  return (
    <>
      {back}
      <h1 id="webhooks-title">Webhooks of {org.name}</h1>
      <p class="muted">Events of this organization are POSTed to each endpoint, signed per the Standard Webhooks specification with the endpoint's secret.</p>
      {!page.webhooks ? <p class="muted">Loading endpoints…</p> : page.webhooks.length === 0 ? <p id="no-webhooks" class="muted">No endpoints yet.</p> : (
        <ul id="webhooks" class="plain">{page.webhooks.map((w) => <Endpoint key={w.id} webhook={w} />)}</ul>
      )}
      <h2>Add an endpoint</h2>
      <CreateForm />
    </>
  );
}
