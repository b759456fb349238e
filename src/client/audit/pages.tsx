/**
 * The audit log page of an organization (admins and owners): who did what, on what, from
 * where and when, newest first, with "load more". Actions get readable names
 * (src/audit/actions.ts); one without a name is shown as it is.
 */
import { useEffect } from 'preact/hooks';
import { auditActionLabel } from '../../shared/audit-actions.js';
import { orgPath } from '../orgs/events.js';
import { Link, useApp } from '../ui/app.js';
import { auditOrgIdOf, type AuditEntry } from './events.js';

const when = (iso: string) => new Date(iso).toLocaleString();
const short = (id: string) => id.slice(0, 8);

function actorOf(e: AuditEntry): string {
  if (e.actor.email) return e.actor.email;
  if (e.actor['api-key-id']) return `API key ${short(e.actor['api-key-id'])}`;
  if (e.actor['account-id']) return `Account ${short(e.actor['account-id'])}`;
  return '—';
}

function targetOf(e: AuditEntry): string {
  if (!e.target) return '—';
  if (e.target.email) return e.target.email;
  if (e.target.type === 'invitation' && typeof e.details.email === 'string') return `Invitation to ${e.details.email}`;
  return `${e.target.type} ${short(e.target.id)}`;
}

const detailsOf = (e: AuditEntry) => Object.entries(e.details).map(([k, v]) => `${k}: ${v === null ? '—' : String(v)}`).join(' · ');

/** A link to the organization's page that routes in the app. */
function BackToOrg({ orgId, name }: { orgId: string; name: string }) {
  const { dispatch } = useApp();
  return (
    <a id="audit-back" href={orgPath(orgId)} onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['router/navigate', { route: 'org', path: orgPath(orgId) }]);
    }}>{name}</a>
  );
}

export function AuditLogPage() {
  const { state, dispatch } = useApp();
  const id = auditOrgIdOf(location.pathname);
  const page = state.auditPage?.orgId === id ? state.auditPage : undefined;
  // a fresh first page on every visit: the log grows while one looks elsewhere
  useEffect(() => {
    if (id) dispatch(['audit/open', id]);
  }, [id]);
  const org = state.orgs?.find((o) => o.id === id);
  const heading = <h1 id="audit-title">Audit log{org ? <> · {org.name}</> : null}</h1>;
  if (!id || page?.status === 'missing') {
    return <>{heading}<p id="audit-missing" class="error" role="alert">This organization does not exist, or you are not a member.</p><p><Link to="orgs">Your organizations</Link></p></>;
  }
  if (page?.status === 'forbidden') {
    return <>{heading}<p id="audit-forbidden" class="error" role="alert">Only the organization's admins and owners can see its audit log.</p><p><BackToOrg orgId={id} name={org?.name ?? 'Back to the organization'} /></p></>;
  }
  if (!page || page.status === 'loading') return <>{heading}<p class="muted">Loading the audit log…</p></>;
  if (page.status === 'failed') return <>{heading}<p class="error" role="alert">The audit log could not be loaded.</p></>;
  return (
    <>
      {heading}
      <p class="muted">Security-relevant changes, newest first. <BackToOrg orgId={id} name={org?.name ? `Back to ${org.name}` : 'Back to the organization'} /></p>
      {page.entries.length === 0 ? <p id="audit-empty" class="muted">Nothing recorded yet.</p> : (
        <table id="audit-log">
          <thead>
            <tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">On</th><th scope="col">From</th></tr>
          </thead>
          <tbody>
            {page.entries.map((e) => (
              <tr key={e.id} data-entry={e.id} data-action={e.action}>
                <td data-field="created-at">{when(e['created-at'])}</td>
                <td data-field="action">{auditActionLabel(e.action)}{Object.keys(e.details).length > 0 && <><br /><span class="muted">{detailsOf(e)}</span></>}</td>
                <td data-field="actor">{actorOf(e)}</td>
                <td data-field="target">{targetOf(e)}</td>
                <td data-field="ip" title={e['user-agent'] ?? undefined}>{e.ip ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.nextCursor && (
        <p><button id="audit-more" type="button" class="secondary" disabled={page.loadingMore} onClick={() => dispatch(['audit/more'])}>
          {page.loadingMore ? 'Loading…' : 'Load more'}
        </button></p>
      )}
    </>
  );
}
