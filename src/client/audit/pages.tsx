/**
 * The audit log page of an organization (admins and owners): who did what, on what, from
 * where and when, newest first, with "load more". Actions get readable names
 * (src/shared/audit-actions.ts); one without a name is shown as it is.
 */
import { useEffect } from 'preact/hooks';
import { auditActionLabel } from '../../shared/audit-actions.js';
import { orgPath } from '../orgs/events.js';
import { Link, useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Actions, Card } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { auditOrgIdOf, type AuditEntry } from './events.js';
import { dateTime } from '../ui/dates.js';

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

const detailsOf = (e: AuditEntry) =>
  Object.entries(e.details)
    .map(([k, v]) => `${k}: ${v === null ? '—' : String(v)}`)
    .join(' · ');

export function AuditLogPage() {
  const { state, dispatch } = useApp();
  const id = auditOrgIdOf(location.pathname);
  const page = state.auditPage?.orgId === id ? state.auditPage : undefined;
  // a fresh first page on every visit: the log grows while one looks elsewhere
  useEffect(() => {
    if (id) dispatch(['audit/open', id]);
  }, [id]);
  const org = state.orgs?.find((o) => o.id === id);
  const back = id && (
    <Link to="org" path={orgPath(id)} id="audit-back">
      {org?.name ? `← ${org.name}` : '← Back to the organization'}
    </Link>
  );
  const header = (
    <PageHeader title={<>Audit log{org ? <> · {org.name}</> : null}</>} id="audit-title" back={back} description="Security-relevant changes, newest first." />
  );
  if (!id || page?.status === 'missing') {
    return (
      <>
        {header}
        <Alert id="audit-missing" tone="error">
          This organization does not exist, or you are not a member. <Link to="orgs">Your organizations</Link>
        </Alert>
      </>
    );
  }
  if (page?.status === 'forbidden') {
    return (
      <>
        {header}
        <Alert id="audit-forbidden" tone="error">
          Only the organization's admins and owners can see its audit log.
        </Alert>
      </>
    );
  }
  if (page?.status === 'failed')
    return (
      <>
        {header}
        <Alert tone="error">The audit log could not be loaded.</Alert>
      </>
    );
  const loading = !page || page.status === 'loading';
  return (
    <>
      {header}
      <Card>
        <Table
          id="audit-log"
          caption="Audit log entries"
          headers={['When', 'Action', 'By', 'On', 'From']}
          rows={loading ? undefined : page.entries}
          loadingText="Loading the audit log…"
          empty="Nothing recorded yet."
          emptyId="audit-empty"
          render={(e) => (
            <tr key={e.id} data-entry={e.id} data-action={e.action}>
              <td data-field="created-at">{dateTime(e['created-at'])}</td>
              <td data-field="action">
                {auditActionLabel(e.action)}
                {Object.keys(e.details).length > 0 && (
                  <>
                    <br />
                    <span class="text-muted">{detailsOf(e)}</span>
                  </>
                )}
              </td>
              <td data-field="actor" class="min-w-40 break-all">
                {actorOf(e)}
              </td>
              <td data-field="target" class="min-w-40 break-all">
                {targetOf(e)}
              </td>
              <td data-field="ip" title={e['user-agent'] ?? undefined}>
                {e.ip ?? '—'}
              </td>
            </tr>
          )}
        />
        {page?.nextCursor && (
          <Actions>
            <Button id="audit-more" variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['audit/more'])}>
              {page.loadingMore ? 'Loading…' : 'Load more'}
            </Button>
          </Actions>
        )}
      </Card>
    </>
  );
}
