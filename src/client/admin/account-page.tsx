/**
 * One account, for a platform admin: who it is, its organizations and roles, sessions,
 * providers; lock or unlock it, or impersonate it (a reason each time: it is kept in the audit
 * log). Another platform admin is shown without the actions the server would refuse.
 */
import { useEffect } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { Submit } from '../ui/button.js';
import { Card, DataList, Muted } from '../ui/card.js';
import { Alert, Badge } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { adminAccountIdOf, type AdminAccountDetail } from './events.js';
import { NotFound, OrgNameCell, subscriptionText } from './pages.js';
import { dateTime } from '../ui/dates.js';

/** A form with one required reason, its submit and what it is for. */
function ReasonForm({
  id,
  label,
  hint,
  submit,
  danger,
  onSubmit,
}: {
  id: string;
  label: string;
  hint: string;
  submit: string;
  danger?: boolean;
  onSubmit: (reason: string) => void;
}) {
  return (
    <Form id={id} onSubmit={(f) => onSubmit(f.reason ?? '')}>
      <Field form={id} name="reason" label={label} hint={hint} required maxLength={500} />
      <Submit id={`${id}-submit`} danger={danger}>
        {submit}
      </Submit>
    </Form>
  );
}

function Actions({ account }: { account: AdminAccountDetail }) {
  const { state, dispatch } = useApp();
  if (account['platform-admin'])
    return (
      <Card title="Actions">
        <Muted>Another platform admin cannot be locked or impersonated. To remove one, take the address out of ADMIN_EMAILS.</Muted>
      </Card>
    );
  if (account.id === state.account?.id) return null;
  return (
    <Card title="Actions">
      <div class="space-y-6">
        {account.locked ? (
          <ReasonForm
            id="admin-unlock"
            label="Why unlock it? (optional)"
            hint="Sign-in works again; the sessions that locking ended stay ended."
            submit="Unlock the account"
            onSubmit={(reason) => dispatch(['admin/account-action', 'unlock', { reason }])}
          />
        ) : (
          <ReasonForm
            id="admin-lock"
            label="Why lock it?"
            hint="Every session ends at once and no sign-in works until it is unlocked."
            submit="Lock the account"
            danger
            onSubmit={(reason) => dispatch(['admin/account-action', 'lock', { reason }])}
          />
        )}
        {!account.locked && (
          <ReasonForm
            id="admin-impersonate"
            label="Why view as this account?"
            hint="For at most an hour you see what it sees; password, email, two-factor, passkeys, providers, deletion and API keys stay out of reach. Recorded with your name."
            submit="Impersonate"
            onSubmit={(reason) => dispatch(['admin/impersonate', { reason }])}
          />
        )}
      </div>
    </Card>
  );
}

export function AdminAccountPage() {
  const { state, dispatch } = useApp();
  const id = adminAccountIdOf(location.pathname);
  useEffect(() => {
    if (id) dispatch(['admin/account-open', id]);
  }, [id]);
  const page = state.adminAccount?.id === id ? state.adminAccount : undefined;
  if (!id || page?.status === 'missing') return <NotFound title="Account" />;
  const back = (
    <Link to="admin-accounts" id="admin-account-back">
      ← Accounts
    </Link>
  );
  if (page?.status === 'failed')
    return (
      <>
        <PageHeader title="Account" id="admin-title" back={back} />
        <Alert tone="error">The account could not be loaded.</Alert>
      </>
    );
  const a = page?.account;
  if (!a)
    return (
      <>
        <PageHeader title="Account" id="admin-title" back={back} />
        <p class="text-sm text-muted" role="status">
          Loading…
        </p>
      </>
    );
  return (
    <>
      <PageHeader title={a.email} id="admin-title" back={back} description={a.name ?? undefined} />
      <div class="space-y-6">
        {a.locked && (
          <Alert id="admin-locked" tone="warning">
            Locked {dateTime(a['locked-at'])}
            {a['locked-reason'] ? `: ${a['locked-reason']}` : ''}
          </Alert>
        )}
        <Card title="Account">
          <DataList
            id="admin-account"
            data-status={a.locked ? 'locked' : 'active'}
            items={[
              [
                'Email',
                <>
                  {a.email} {a['email-verified'] ? <Badge tone="success">Verified</Badge> : <Badge tone="warning">Unverified</Badge>}
                </>,
                'email',
              ],
              ['Created', dateTime(a['created-at']), 'created-at'],
              ['Last seen', dateTime(a['last-seen-at']), 'last-seen-at'],
              ['Two-factor', a['two-factor-enabled'] ? 'On' : 'Off', 'two-factor'],
              ['Live sessions', a['session-count'], 'session-count'],
              ['Subscription', a.subscription.status === 'none' ? 'None' : `${a.subscription.plan ?? ''} (${a.subscription.status})`, 'subscription'],
              a['platform-admin'] && ['Platform admin', 'Yes', 'platform-admin'],
            ]}
          />
        </Card>
        <Card title="Organizations">
          <Table
            id="admin-account-orgs"
            caption="The account's organizations"
            headers={['Name', 'Role', 'Subscription']}
            rows={a.organizations}
            empty="No organization."
            render={(o) => (
              <tr key={o.id} data-org={o.id}>
                <OrgNameCell org={o} />
                <td>{o.role}</td>
                <td>{subscriptionText(o.subscription)}</td>
              </tr>
            )}
          />
        </Card>
        {a.identities.length > 0 && (
          <Card title="Sign-in providers">
            <Table
              id="admin-account-identities"
              caption="Linked providers"
              headers={['Provider', 'Email', 'Linked', 'Last used']}
              rows={a.identities}
              empty="None."
              render={(i) => (
                <tr key={`${i.provider}-${i['created-at']}`}>
                  <td>{i.provider}</td>
                  <td class="min-w-40 break-all">{i.email ?? '—'}</td>
                  <td>{dateTime(i['created-at'])}</td>
                  <td>{dateTime(i['last-used-at'])}</td>
                </tr>
              )}
            />
          </Card>
        )}
        <Actions account={a} />
      </div>
    </>
  );
}
