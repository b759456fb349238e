/**
 * The operator's console (platform admins, docs/admin.md): the platform's numbers, accounts and
 * organizations found by a prefix, and the admin audit log. One account's page is in
 * account-page.tsx. A non-admin who opens one of these paths gets the same "not found" the
 * server gives it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { auditActionLabel } from '../../shared/audit-actions.js';
import { Link, useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, DataList, Stack } from '../ui/card.js';
import { Alert, Badge } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { adminAccountPath, type AdminAccountRow, type AdminAuditEntry, type AdminList, type AdminOrgRow, type PagedList } from './events.js';
import { dateTime } from '../ui/dates.js';

/** An organization's plan and status, or a dash without a subscription. */
export const subscriptionText = (s: { status: string; plan: string | null }) => (s.status === 'none' ? '—' : `${s.plan ?? ''} (${s.status})`);

/** An organization's name cell, marked when it is an account's personal one. */
export function OrgNameCell({ org }: { org: { name: string; personal: boolean } }) {
  return (
    <td>
      {org.name}
      {org.personal && (
        <>
          {' '}
          <Badge>Personal</Badge>
        </>
      )}
    </td>
  );
}

/** What a non-admin sees: the server's 404, said plainly. */
export function NotFound({ title }: { title: string }) {
  return (
    <>
      <PageHeader title={title} id="admin-title" />
      <Alert id="admin-missing" tone="error">
        This page does not exist. <Link to="account">Back to your account</Link>
      </Alert>
    </>
  );
}

/** A prefix search over one list, its table and "load more". */
function SearchList<T extends { id: string }>({
  list,
  page,
  label,
  children,
}: {
  list: AdminList;
  page: PagedList<T> | undefined;
  label: string;
  children: (rows: T[] | undefined) => ComponentChildren;
}) {
  const { dispatch } = useApp();
  const form = `admin-${list}-search`;
  return (
    <Card>
      <Form id={form} resetKey={0} onSubmit={(f) => dispatch(['admin/list-open', list, f.q ?? ''])}>
        <div class="flex flex-wrap items-end gap-2">
          <div class="min-w-0 flex-1">
            <Field form={form} name="q" label={label} defaultValue={page?.q ?? ''} spellcheck={false} />
          </div>
          <Submit id={`${form}-submit`}>Search</Submit>
        </div>
      </Form>
      {page?.status === 'failed' ? (
        <Alert tone="error">The list could not be loaded.</Alert>
      ) : (
        children(page && page.status !== 'loading' ? page.items : undefined)
      )}
      {page?.nextCursor && (
        <Actions>
          <Button id={`admin-${list}-more`} variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['admin/list-more', list])}>
            {page.loadingMore ? 'Loading…' : 'Load more'}
          </Button>
        </Actions>
      )}
    </Card>
  );
}

/** opens a list's first page on every visit (the platform changes while one looks elsewhere) */
function useList(list: AdminList) {
  const { dispatch } = useApp();
  useEffect(() => {
    dispatch(['admin/list-open', list, '']);
  }, []);
}

export function AdminStatsPage() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['admin/stats-open']);
  }, []);
  const page = state.adminStats;
  if (page?.status === 'missing') return <NotFound title="Platform" />;
  const s = page?.stats;
  const plans = s ? Object.entries(s.subscriptions) : [];
  return (
    <>
      <PageHeader
        title="Platform"
        id="admin-title"
        description="The whole platform's numbers. Find an account or an organization in the pages beside this one."
      />
      {page?.status === 'failed' && <Alert tone="error">The numbers could not be loaded.</Alert>}
      {!s ? (
        <p class="text-sm text-muted" role="status">
          Loading…
        </p>
      ) : (
        <Stack columns={2}>
          <Card title="Accounts">
            <DataList
              id="admin-stats"
              items={[
                ['Accounts', s.accounts, 'accounts'],
                ['Verified', s['verified-accounts'], 'verified-accounts'],
                ['Sign-ups, last 7 days', s['sign-ups-7d'], 'sign-ups-7d'],
                ['Sign-ups, last 30 days', s['sign-ups-30d'], 'sign-ups-30d'],
              ]}
            />
          </Card>
          <Card title="Organizations">
            <DataList
              id="admin-stats-orgs"
              items={[
                ['Organizations', s.organizations, 'organizations'],
                ...plans.map(([plan, n]): [string, number, string] => [`Subscribed: ${plan}`, n, `plan-${plan}`]),
                plans.length === 0 && ['Subscriptions', 'none yet', 'subscriptions'],
              ]}
            />
          </Card>
        </Stack>
      )}
    </>
  );
}

export function AdminAccountsPage() {
  const { state } = useApp();
  useList('accounts');
  const page = state.adminAccounts;
  if (page?.status === 'missing') return <NotFound title="Accounts" />;
  return (
    <>
      <PageHeader
        title="Accounts"
        id="admin-title"
        description="Every account of the platform. Search by the start of an email address, a name or any word of the name."
      />
      <SearchList<AdminAccountRow> list="accounts" page={page} label="Email or name starts with">
        {(rows) => (
          <Table
            id="admin-accounts"
            caption="Accounts"
            headers={['Email', 'Name', 'Status', 'Created', 'Last seen']}
            rows={rows}
            empty="No account matches."
            emptyId="admin-accounts-empty"
            render={(a) => (
              <tr key={a.id} data-account={a.id}>
                <td class="min-w-40 break-all">
                  <Link to="admin-account" path={adminAccountPath(a.id)}>
                    {a.email}
                  </Link>
                </td>
                <td>{a.name ?? '—'}</td>
                <td class="space-x-1">
                  {a.locked && <Badge tone="error">Locked</Badge>}
                  {!a['email-verified'] && <Badge tone="warning">Unverified</Badge>}
                  {a['two-factor-enabled'] && <Badge tone="success">2FA</Badge>}
                </td>
                <td>{dateTime(a['created-at'])}</td>
                <td>{dateTime(a['last-seen-at'])}</td>
              </tr>
            )}
          />
        )}
      </SearchList>
    </>
  );
}

export function AdminOrgsPage() {
  const { state } = useApp();
  useList('orgs');
  const page = state.adminOrgs;
  if (page?.status === 'missing') return <NotFound title="Organizations" />;
  return (
    <>
      <PageHeader title="Organizations" id="admin-title" description="Every organization of the platform, with its members and subscription." />
      <SearchList<AdminOrgRow> list="orgs" page={page} label="Name or slug starts with">
        {(rows) => (
          <Table
            id="admin-orgs"
            caption="Organizations"
            headers={['Name', 'Slug', 'Members', 'Subscription', 'Created']}
            rows={rows}
            empty="No organization matches."
            emptyId="admin-orgs-empty"
            render={(o) => (
              <tr key={o.id} data-org={o.id}>
                <OrgNameCell org={o} />
                <td class="min-w-40 break-all">{o.slug}</td>
                <td>{o['member-count']}</td>
                <td>{subscriptionText(o.subscription)}</td>
                <td>{dateTime(o['created-at'])}</td>
              </tr>
            )}
          />
        )}
      </SearchList>
    </>
  );
}

const who = (p: { 'account-id': string | null; email?: string } | null | undefined) =>
  p?.email ?? (p?.['account-id'] ? `Account ${p['account-id'].slice(0, 8)}` : '—');

export function AdminAuditPage() {
  const { state, dispatch } = useApp();
  useList('audit');
  const page = state.adminAudit;
  if (page?.status === 'missing') return <NotFound title="Admin audit log" />;
  return (
    <>
      <PageHeader title="Admin audit log" id="admin-title" description="Every admin action, and every change made while impersonating, newest first." />
      <Card>
        {page?.status === 'failed' ? (
          <Alert tone="error">The audit log could not be loaded.</Alert>
        ) : (
          <Table<AdminAuditEntry>
            id="admin-audit"
            caption="Admin audit log entries"
            headers={['When', 'Action', 'By', 'As', 'On']}
            rows={page && page.status !== 'loading' ? page.items : undefined}
            empty="Nothing recorded yet."
            emptyId="admin-audit-empty"
            render={(e) => (
              <tr key={e.id} data-action={e.action}>
                <td>{dateTime(e['created-at'])}</td>
                <td>
                  {auditActionLabel(e.action)}
                  {typeof e.details.reason === 'string' && (
                    <>
                      <br />
                      <span class="text-muted">{e.details.reason}</span>
                    </>
                  )}
                </td>
                <td class="min-w-40 break-all">{who(e.actor)}</td>
                <td class="min-w-40 break-all">{e.impersonated ? who(e.impersonated) : '—'}</td>
                <td class="min-w-40 break-all">{e.target ? (e.target.email ?? `${e.target.type} ${e.target.id.slice(0, 8)}`) : '—'}</td>
              </tr>
            )}
          />
        )}
        {page?.nextCursor && (
          <Actions>
            <Button id="admin-audit-more" variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['admin/list-more', 'audit'])}>
              {page.loadingMore ? 'Loading…' : 'Load more'}
            </Button>
          </Actions>
        )}
      </Card>
    </>
  );
}
