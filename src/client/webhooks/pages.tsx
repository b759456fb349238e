/**
 * The Webhooks page of an organization (`/orgs/<id>/webhooks`, admins): endpoints with their
 * events and state; reveal (and hide) and rotate a secret (confirmed); send a test; enable,
 * disable, delete (confirmed); a form to add one with an event picker, the server's field errors
 * beside their fields; and an endpoint's delivery log: each delivery's attempts with status code,
 * duration and error, a status filter, "Load more", and retry. It reads the state and dispatches
 * the events of webhooks/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, DataList, Muted, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert, Badge, type Tone } from '../ui/feedback.js';
import { CheckboxGroup, CopyField, Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { ALL_EVENTS, CREATE_FORM, webhooksOrgIdOf, type DeliveryFilter, type Webhook, type WebhookDelivery } from './events.js';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { dateTime } from '../ui/dates.js';
import { msg, t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

const STATUS_TONES: Record<WebhookDelivery['status'], Tone> = { pending: 'warning', succeeded: 'success', failed: 'error' };
const STATUS_WORDS: Record<WebhookDelivery['status'], string> = { pending: msg('Pending'), succeeded: msg('Succeeded'), failed: msg('Failed') };

const FILTERS: Array<{ value: DeliveryFilter; label: string }> = [
  { value: '', label: msg('All deliveries') },
  { value: 'pending', label: msg('Pending') },
  { value: 'succeeded', label: msg('Succeeded') },
  { value: 'failed', label: msg('Failed') },
];

function EndpointState({ webhook }: { webhook: Webhook }) {
  if (webhook.enabled) return <Badge tone="success">{t('enabled')}</Badge>;
  return webhook['disabled-reason'] === 'failing' ? (
    <Badge tone="error">{t('disabled after failing deliveries')}</Badge>
  ) : (
    <Badge tone="warning">{t('disabled')}</Badge>
  );
}

function Secret({ webhook, secret }: { webhook: Webhook; secret: string | undefined }) {
  const { state, dispatch } = useApp();
  return (
    <div class="flex flex-wrap gap-2 sm:flex-nowrap">
      {secret ? (
        <>
          <CopyField id={`webhook-secret-${webhook.id}`} label={t('Signing secret of {url}', { url: webhook.url })} value={secret} />
          <Button variant="secondary" class="hide-secret" onClick={() => dispatch(['webhooks/hide', webhook.id])}>
            {t('Hide')}
          </Button>
        </>
      ) : (
        <Button variant="secondary" class="reveal-secret" disabled={state.busy} onClick={() => dispatch(['webhooks/reveal', webhook.id])}>
          {t('Reveal secret')}
        </Button>
      )}
      <ConfirmButton
        variant="secondary"
        class="rotate-secret"
        disabled={state.busy}
        title={t('Make a new secret?')}
        message={t('The current one keeps signing for 24 hours: move the receiver to the new one before then.')}
        confirmLabel={t('Rotate')}
        onConfirm={() => dispatch(['webhooks/rotate', webhook.id])}
      >
        {t('Rotate')}
      </ConfirmButton>
    </div>
  );
}

function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts.length === 0) return <span class="text-muted">{t('no attempt yet')}</span>;
  return (
    <ol class="space-y-1">
      {delivery.attempts.map((a) => (
        <li key={a.at} data-status-code={a['status-code'] ?? ''}>
          {dateTime(a.at)}
          {rich(': <0/> in {durationMs} ms', [<strong key="status">{a['status-code'] ?? t('no response')}</strong>], { durationMs: a['duration-ms'] })}
          {a.error ? ` (${a.error})` : ''}
          {a.response && (
            <details>
              <summary>{t('Response')}</summary>
              <pre class="whitespace-pre-wrap break-all">{a.response}</pre>
            </details>
          )}
        </li>
      ))}
    </ol>
  );
}

function DeliveryRow({ delivery }: { delivery: WebhookDelivery }) {
  const { state, dispatch } = useApp();
  return (
    <tr data-delivery={delivery.id} data-status={delivery.status}>
      <td>
        {delivery['event-type']}
        <br />
        <code class="text-muted">{delivery['message-id']}</code>
        <br />
        <span class="text-muted">{dateTime(delivery['created-at'])}</span>
      </td>
      <td>
        <Badge tone={STATUS_TONES[delivery.status]}>{t(STATUS_WORDS[delivery.status])}</Badge>
        {delivery['next-attempt-at'] && (
          <>
            <br />
            <span class="text-muted">
              {t('next:')} {dateTime(delivery['next-attempt-at'])}
            </span>
          </>
        )}
      </td>
      <td>
        <Attempts delivery={delivery} />
      </td>
      <td>
        {delivery.status !== 'pending' && (
          <Button variant="secondary" class="retry-delivery" disabled={state.busy} onClick={() => dispatch(['webhooks/retry', delivery.id])}>
            {t('Retry')}
          </Button>
        )}
      </td>
    </tr>
  );
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const { state, dispatch } = useApp();
  const log = state.webhooksPage!.log!;
  return (
    <div id={`deliveries-${webhook.id}`} class="space-y-4">
      <SelectField
        id="delivery-filter"
        label={t('Show')}
        value={log.filter}
        options={FILTERS}
        onChange={(value) => dispatch(['webhooks/show-log', log.webhookId, value as DeliveryFilter])}
      />
      <Table
        id="delivery-log"
        caption={t('Deliveries to {url}', { url: webhook.url })}
        headers={[t('Event'), t('Status'), t('Attempts'), '']}
        rows={log.items}
        loadingText={t('Loading deliveries…')}
        empty={t('No deliveries in the last 30 days.')}
        emptyId="no-deliveries"
        render={(d) => <DeliveryRow key={d.id} delivery={d} />}
      />
      {log.nextCursor && (
        <Actions>
          <Button variant="secondary" class="more-deliveries" onClick={() => dispatch(['webhooks/more'])}>
            {t('Load more')}
          </Button>
        </Actions>
      )}
    </div>
  );
}

function Endpoint({ webhook }: { webhook: Webhook }) {
  const { state, dispatch } = useApp();
  const page = state.webhooksPage!;
  const showing = page.log?.webhookId === webhook.id;
  return (
    <li class="webhook min-w-0" data-webhook={webhook.id}>
      <Card
        id={`webhook-${webhook.id}`}
        title={<code class="break-all">{webhook.url}</code>}
        description={webhook.description || undefined}
        data-enabled={String(webhook.enabled)}
      >
        <DataList
          items={[
            [t('Events'), webhook.events.includes(ALL_EVENTS) ? t('Every event type') : webhook.events.join(', '), 'events'],
            [t('State'), <EndpointState webhook={webhook} />, 'state'],
            [t('Created'), dateTime(webhook['created-at']), 'created-at'],
          ]}
        />
        <Secret webhook={webhook} secret={page.secrets[webhook.id]} />
        <Actions>
          <Button variant="secondary" class="send-test" disabled={state.busy || !webhook.enabled} onClick={() => dispatch(['webhooks/test', webhook.id])}>
            {t('Send test')}
          </Button>
          <Button
            variant="secondary"
            class="show-log"
            aria-expanded={showing}
            aria-controls={showing ? `deliveries-${webhook.id}` : undefined}
            onClick={() => dispatch(showing ? ['webhooks/hide-log'] : ['webhooks/show-log', webhook.id, ''])}
          >
            {showing ? t('Hide deliveries') : t('Deliveries')}
          </Button>
          <Button
            variant="secondary"
            class="toggle-webhook"
            disabled={state.busy}
            onClick={() => dispatch(['webhooks/set-enabled', webhook.id, !webhook.enabled])}
          >
            {webhook.enabled ? t('Disable') : t('Enable')}
          </Button>
          <ConfirmButton
            class="delete-webhook"
            disabled={state.busy}
            title={t('Delete the endpoint {url}?', { url: webhook.url })}
            message={t('Nothing more is sent to it, and its delivery log goes with it.')}
            confirmLabel={t('Delete endpoint')}
            onConfirm={() => dispatch(['webhooks/delete', webhook.id])}
          >
            {t('Delete')}
          </ConfirmButton>
        </Actions>
        {showing && <Deliveries webhook={webhook} />}
      </Card>
    </li>
  );
}

function CreateForm() {
  const { state, dispatch } = useApp();
  const page = state.webhooksPage!;
  const types = (page.eventTypes ?? []).filter((t) => t !== 'webhook.test');
  return (
    <Card title={t('Add an endpoint')} id="create-webhook-card">
      <Form
        id={CREATE_FORM}
        resetKey={page.formResets}
        onSubmit={(fields, data) => {
          const events = data.getAll('events').map(String);
          dispatch([
            'webhooks/create',
            { url: fields.url ?? '', description: fields.description ?? '', events: events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events },
          ]);
        }}
      >
        <Field
          form={CREATE_FORM}
          id="webhook-url"
          name="url"
          type="url"
          label={t('URL')}
          required
          maxLength={2000}
          placeholder="https://example.com/webhooks"
        />
        <Field
          form={CREATE_FORM}
          id="webhook-description"
          name="description"
          label={t('Description')}
          maxLength={500}
          hint={t('What it is for, e.g. CRM sync')}
        />
        <CheckboxGroup
          form={CREATE_FORM}
          id="webhook-events"
          name="events"
          legend={t('Events')}
          options={[
            { value: ALL_EVENTS, label: t('All event types, those added later included') },
            ...types.map((t) => ({ value: t, label: <code>{t}</code> })),
          ]}
        />
        <Submit>{t('Add endpoint')}</Submit>
      </Form>
    </Card>
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
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('Webhooks')} missing />;
  if (!page?.org) return <OrgPageGate title={t('Webhooks')} />;
  const org = page.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member') {
    return (
      <>
        <PageHeader title={t('Webhooks')} back={back} />
        <Alert id="webhooks-forbidden" tone="error">
          {t('Only admins and owners manage the webhooks of {name}.', { name: org.name })}
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t('Webhooks of {name}', { name: org.name })}
        id="webhooks-title"
        back={back}
        description={t("Events of this organization are POSTed to each endpoint, signed per the Standard Webhooks specification with the endpoint's secret.")}
      />
      <Stack>
        {!page.webhooks ? (
          <p class="text-sm text-muted" role="status">
            {t('Loading endpoints…')}
          </p>
        ) : page.webhooks.length === 0 ? (
          <Card title={t('Endpoints')} id="webhooks-card">
            <Muted id="no-webhooks">{t('No endpoints yet.')}</Muted>
          </Card>
        ) : (
          <ul id="webhooks" aria-label={t('Endpoints')} class="grid min-w-0 gap-4 sm:gap-6">
            {page.webhooks.map((w) => (
              <Endpoint key={w.id} webhook={w} />
            ))}
          </ul>
        )}
        <CreateForm />
      </Stack>
    </>
  );
}
