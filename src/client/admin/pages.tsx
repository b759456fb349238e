/**
 * The operator's console (platform admins, docs/admin.md): the platform's numbers, accounts and
 * organizations found by a prefix, and the admin audit log. One account's page is in
 * account-page.tsx. A non-admin who opens one of these paths gets the same "not found" the
 * server gives it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { auditActionLabel } from '../audit/action-labels.js';
import { Link, useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, DataList, Stack } from '../ui/card.js';
import { Alert, Badge } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { adminAccountPath, type AdminAccountRow, type AdminAuditEntry, type AdminList, type AdminOrgRow, type PagedList } from './events.js';
import { dateTime } from '../ui/dates.js';
import { t } from '../i18n/words.js';
import { subscriptionStatusText } from '../billing/status-words.js';

/** An organization's plan and status, or a dash without a subscription. */
export const subscriptionText = (s: { status: string; plan: string | null }) =>
  s.status === 'none' ? '—' : t('{status} ({plan})', { status: subscriptionStatusText(s.status), plan: s.plan ?? '' });

/** An organization's name cell, marked when it is an account's personal one. */
export function OrgNameCell({ org }: { org: { name: string; personal: boolean } }) {
  return (
    <td>
      {org.name}
      {org.personal && (
        <>
          {' '}
          <Badge>{t('Personal')}</Badge>
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
        {t('This page does not exist.')} <Link to="account">{t('Back to your account')}</Link>
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
          <Submit id={`${form}-submit`}>{t('Search')}</Submit>
        </div>
      </Form>
      {page?.status === 'failed' ? (
        <Alert tone="error">{t('The list could not be loaded.')}</Alert>
      ) : (
        children(page && page.status !== 'loading' ? page.items : undefined)
      )}
      {page?.nextCursor && (
        <Actions>
          <Button id={`admin-${list}-more`} variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['admin/list-more', list])}>
            {page.loadingMore ? t('Loading…') : t('Load more')}
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
  if (page?.status === 'missing') return <NotFound title={t('Platform')} />;
  const s = page?.stats;
  const plans = s ? Object.entries(s.subscriptions) : [];
  return (
    <>
      <PageHeader
        title={t('Platform')}
        id="admin-title"
        description={t("The whole platform's numbers. Find an account or an organization in the pages beside this one.")}
      />
      {page?.status === 'failed' && <Alert tone="error">{t('The numbers could not be loaded.')}</Alert>}
      {!s ? (
        <p class="text-sm text-muted" role="status">
          {t('Loading…')}
        </p>
      ) : (
        <Stack columns={2}>
          <Card title={t('Accounts')}>
            <DataList
              id="admin-stats"
              items={[
                [t('Accounts'), s.accounts, 'accounts'],
                [t('Verified'), s['verified-accounts'], 'verified-accounts'],
                [t('Sign-ups, last 7 days'), s['sign-ups-7d'], 'sign-ups-7d'],
                [t('Sign-ups, last 30 days'), s['sign-ups-30d'], 'sign-ups-30d'],
              ]}
            />
          </Card>
          <Card title={t('Organizations')}>
            <DataList
              id="admin-stats-orgs"
              items={[
                [t('Organizations'), s.organizations, 'organizations'],
                ...plans.map(([plan, n]): [string, number, string] => [t('Subscribed: {plan}', { plan }), n, `plan-${plan}`]),
                plans.length === 0 && [t('Subscriptions'), t('none yet'), 'subscriptions'],
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
  if (page?.status === 'missing') return <NotFound title={t('Accounts')} />;
  return (
    <>
      <PageHeader
        title={t('Accounts')}
        id="admin-title"
        description={t('Every account of the platform. Search by the start of an email address, a name or any word of the name.')}
      />
      <SearchList<AdminAccountRow> list="accounts" page={page} label={t('Email or name starts with')}>
        {(rows) => (
          <Table
            id="admin-accounts"
            caption={t('Accounts')}
            headers={[t('Email'), t('Name'), t('Status'), t('Created'), t('Last seen')]}
            rows={rows}
            empty={t('No account matches.')}
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
                  {a.locked && <Badge tone="error">{t('Locked')}</Badge>}
                  {!a['email-verified'] && <Badge tone="warning">{t('Unverified')}</Badge>}
                  {a['two-factor-enabled'] && <Badge tone="success">{t('2FA')}</Badge>}
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
  if (page?.status === 'missing') return <NotFound title={t('Organizations')} />;
  return (
    <>
      <PageHeader title={t('Organizations')} id="admin-title" description={t('Every organization of the platform, with its members and subscription.')} />
      <SearchList<AdminOrgRow> list="orgs" page={page} label={t('Name or slug starts with')}>
        {(rows) => (
          <Table
            id="admin-orgs"
            caption={t('Organizations')}
            headers={[t('Name'), t('Slug'), t('Members'), t('Subscription'), t('Created')]}
            rows={rows}
            empty={t('No organization matches.')}
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
  p?.email ?? (p?.['account-id'] ? t('Account {id}', { id: p['account-id'].slice(0, 8) }) : '—');

export function AdminAuditPage() {
  const { state, dispatch } = useApp();
  useList('audit');
  const page = state.adminAudit;
  if (page?.status === 'missing') return <NotFound title={t('Admin audit log')} />;
  return (
    <>
      <PageHeader
        title={t('Admin audit log')}
        id="admin-title"
        description={t('Every admin action, and every change made while impersonating, newest first.')}
      />
      <Card>
        {page?.status === 'failed' ? (
          <Alert tone="error">{t('The audit log could not be loaded.')}</Alert>
        ) : (
          <Table<AdminAuditEntry>
            id="admin-audit"
            caption={t('Admin audit log entries')}
            headers={[t('When'), t('Action'), t('By'), t('As'), t('Target')]}
            rows={page && page.status !== 'loading' ? page.items : undefined}
            empty={t('Nothing recorded yet.')}
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
              {page.loadingMore ? t('Loading…') : t('Load more')}
            </Button>
          </Actions>
        )}
      </Card>
    </>
  );
}
