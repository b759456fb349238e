/**
 * The audit log page of an organization (admins and owners): who did what, on what, from
 * where and when, newest first, with "load more". Filters (actions, actor, target, period) are
 * the page's query string, so a reload or a shared link keeps them; a filter the server refuses
 * has its message beside its field. The selection exports as CSV or NDJSON (export.ts); the
 * streams page is linked from the header. Actions get readable names
 * (src/client/audit/action-labels.ts); one without a name is shown as it is.
 */
import { useEffect } from 'preact/hooks';
import { AUDIT_ACTION_LABELS, auditActionLabel } from './action-labels.js';
import { orgPath } from '../orgs/events.js';
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink, Submit } from '../ui/button.js';
import { Actions, Card, Stack } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { CheckboxGroup, Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { auditOrgIdOf, FILTER_FORM, type AuditEntry } from './events.js';
import { localInput, queryOfForm } from './filters.js';
import { streamsPath } from './streams-events.js';
import { dateTime } from '../ui/dates.js';
import { t } from '../i18n/words.js';

const short = (id: string) => id.slice(0, 8);

function actorOf(e: AuditEntry): string {
  if (e.actor.email) return e.actor.email;
  if (e.actor['api-key-id']) return t('API key {id}', { id: short(e.actor['api-key-id']) });
  if (e.actor['account-id']) return t('Account {id}', { id: short(e.actor['account-id']) });
  return '—';
}

function targetOf(e: AuditEntry): string {
  if (!e.target) return '—';
  if (e.target.email) return e.target.email;
  if (e.target.type === 'invitation' && typeof e.details.email === 'string') return t('Invitation to {email}', { email: e.details.email });
  return `${e.target.type} ${short(e.target.id)}`;
}

const detailsOf = (e: AuditEntry) =>
  Object.entries(e.details)
    .map(([k, v]) => `${k}: ${v === null ? '—' : String(v)}`)
    .join(' · ');

/** The filter form, filled from the query shown (`query`); the page keys it (`formKey`). */
function Filters({ query }: { query: string }) {
  const { dispatch } = useApp();
  const q = new URLSearchParams(query);
  const chosen = q.getAll('action');
  const known = Object.keys(AUDIT_ACTION_LABELS);
  const field = (name: string, label: string, hint?: string) => (
    <Field form={FILTER_FORM} name={name} label={label} hint={hint} defaultValue={q.get(name) ?? ''} spellcheck={false} />
  );
  const period = (name: string, label: string, hint: string) => (
    <Field form={FILTER_FORM} name={name} label={label} hint={hint} type="datetime-local" defaultValue={localInput(q.get(name))} />
  );
  return (
    <Card title={t('Filters')} id="audit-filters-card">
      <Form id={FILTER_FORM} onSubmit={(_fields, data) => dispatch(['audit/filter', queryOfForm(data), true])}>
        <details open={chosen.some((a) => known.includes(a))}>
          <summary class="cursor-pointer text-sm font-medium">{t('Actions')}</summary>
          <div class="mt-2 max-h-64 overflow-y-auto rounded-lg border border-line p-3">
            {/* its errors show under the other actions' field, which has the same name */}
            <CheckboxGroup
              form="audit-actions"
              id="audit-actions"
              name="action"
              legend={t('Only these actions')}
              options={known.map((a) => ({ value: a, label: auditActionLabel(a), checked: chosen.includes(a) }))}
            />
          </div>
        </details>
        <div class="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          <Field
            form={FILTER_FORM}
            name="action"
            label={t('Other actions')}
            hint={t('Separated by spaces')}
            defaultValue={chosen.filter((a) => !known.includes(a)).join(' ')}
            spellcheck={false}
          />
          {field('actor-id', t('Actor'), t('An account or API key id'))}
          {field('target-type', t('Target type'), t('account, api-key, webhook, …'))}
          {field('target-id', t('Target id'))}
          {period('from', t('From'), t('Inclusive'))}
          {period('to', t('To'), t('Exclusive'))}
        </div>
        <Actions>
          <Submit id="audit-apply">{t('Apply filters')}</Submit>
          {query && (
            <Button id="audit-clear" variant="secondary" onClick={() => dispatch(['audit/filter', ''])}>
              {t('Clear')}
            </Button>
          )}
        </Actions>
      </Form>
    </Card>
  );
}

/** The export buttons, and a line saying it is under way or why it failed. */
function Export({ orgId }: { orgId: string }) {
  const { state, dispatch } = useApp();
  const ex = state.auditExport?.orgId === orgId ? state.auditExport : undefined;
  return (
    <>
      {['csv', 'ndjson'].map((format) => (
        <Button key={format} id={`audit-export-${format}`} variant="secondary" disabled={ex && !ex.error} onClick={() => dispatch(['audit/export', format])}>
          {t('Export')} {format.toUpperCase()}
        </Button>
      ))}
      <p id="audit-export-status" class={`basis-full text-sm ${ex?.error ? 'text-danger' : 'text-muted'}`} role="status">
        {ex && (ex.error ? t('The export failed: {reason}', { reason: ex.error }) : t('Exporting…'))}
      </p>
    </>
  );
}

export function AuditLogPage() {
  const { state, dispatch } = useApp();
  const id = auditOrgIdOf(location.pathname);
  const page = state.auditPage?.orgId === id ? state.auditPage : undefined;
  const search = location.search;
  // a fresh first page on every visit (the log grows while one looks elsewhere) and for every query (filters applied, Back, Forward)
  useEffect(() => {
    if (id) dispatch(['audit/open', id, search]);
  }, [id, search]);
  const org = state.orgs?.find((o) => o.id === id);
  const back = id && (
    <Link to="org" path={orgPath(id)} id="audit-back">
      {org?.name ? t('← {name}', { name: org.name }) : t('← Back to the organization')}
    </Link>
  );
  const header = (
    <PageHeader
      title={
        <>
          {t('Audit log')}
          {org ? <> · {org.name}</> : null}
        </>
      }
      id="audit-title"
      back={back}
      description={t('Security-relevant changes, newest first.')}
      actions={
        org &&
        org.role !== 'member' && (
          <ButtonLink to="org-audit-streams" path={streamsPath(org.id)} id="audit-streams-link" variant="secondary">
            {t('Streams')}
          </ButtonLink>
        )
      }
    />
  );
  if (!id || page?.status === 'missing') {
    return (
      <>
        {header}
        <Alert id="audit-missing" tone="error">
          {t('This organization does not exist, or you are not a member.')} <Link to="orgs">{t('Your organizations')}</Link>
        </Alert>
      </>
    );
  }
  if (page?.status === 'forbidden') {
    return (
      <>
        {header}
        <Alert id="audit-forbidden" tone="error">
          {t("Only the organization's admins and owners can see its audit log.")}
        </Alert>
      </>
    );
  }
  if (page?.status === 'failed')
    return (
      <>
        {header}
        <Alert tone="error">{t('The audit log could not be loaded.')}</Alert>
      </>
    );
  const loading = !page || page.status === 'loading';
  return (
    <>
      {header}
      <Stack>
        <Filters key={page?.formKey} query={page?.query ?? ''} />
        <Card title={t('Entries')} id="audit-entries" description={page?.query ? t('Those the filters select.') : undefined} actions={<Export orgId={id} />}>
          {page?.status === 'invalid' ? (
            <Alert id="audit-invalid" tone="error">
              {t('A filter is not valid: see the message beside it.')}
            </Alert>
          ) : (
            <Table
              id="audit-log"
              caption={t('Audit log entries')}
              headers={[t('When'), t('Action'), t('By'), t('Target'), t('From')]}
              rows={loading ? undefined : page.entries}
              loadingText={t('Loading the audit log…')}
              empty={page?.query ? t('No entry matches the filters.') : t('Nothing recorded yet.')}
              emptyId="audit-empty"
              render={(e) => (
                <tr key={e.id} data-entry={e.id} data-action={e.action}>
                  <td data-field="created-at">{dateTime(e['created-at'])}</td>
                  <td data-field="action">
                    {auditActionLabel(e.action)}
                    {Object.keys(e.details).length > 0 && (
                      <>
                        <br />
                        {/* the details are the API's names and values: left to right in every language */}
                        <bdi dir="ltr" class="text-muted">
                          {detailsOf(e)}
                        </bdi>
                      </>
                    )}
                  </td>
                  <td data-field="actor" class="min-w-40 break-all">
                    <bdi>{actorOf(e)}</bdi>
                  </td>
                  <td data-field="target" class="min-w-40 break-all">
                    <bdi>{targetOf(e)}</bdi>
                  </td>
                  <td data-field="ip" title={e['user-agent'] ?? undefined}>
                    {e.ip ?? '—'}
                  </td>
                </tr>
              )}
            />
          )}
          {page?.nextCursor && (
            <Actions>
              <Button id="audit-more" variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['audit/more'])}>
                {page.loadingMore ? t('Loading…') : t('Load more')}
              </Button>
            </Actions>
          )}
        </Card>
      </Stack>
    </>
  );
}
