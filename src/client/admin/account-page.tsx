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
import { t } from '../i18n/words.js';
import { roleName } from '../orgs/roles.js';

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
      <Card title={t('Actions')}>
        <Muted>{t('Another platform admin cannot be locked or impersonated. To remove one, take the address out of ADMIN_EMAILS.')}</Muted>
      </Card>
    );
  if (account.id === state.account?.id) return null;
  return (
    <Card title={t('Actions')}>
      <div class="space-y-6">
        {account.locked ? (
          <ReasonForm
            id="admin-unlock"
            label={t('Why unlock it? (optional)')}
            hint={t('Sign-in works again; the sessions that locking ended stay ended.')}
            submit={t('Unlock the account')}
            onSubmit={(reason) => dispatch(['admin/account-action', 'unlock', { reason }])}
          />
        ) : (
          <ReasonForm
            id="admin-lock"
            label={t('Why lock it?')}
            hint={t('Every session ends at once and no sign-in works until it is unlocked.')}
            submit={t('Lock the account')}
            danger
            onSubmit={(reason) => dispatch(['admin/account-action', 'lock', { reason }])}
          />
        )}
        {!account.locked && (
          <ReasonForm
            id="admin-impersonate"
            label={t('Why view as this account?')}
            hint={t(
              'For at most an hour you see what it sees; password, email, two-factor, passkeys, providers, deletion and API keys stay out of reach. Recorded with your name.',
            )}
            submit={t('Impersonate')}
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
  if (!id || page?.status === 'missing') return <NotFound title={t('Account')} />;
  const back = (
    <Link to="admin-accounts" id="admin-account-back">
      {t('← Accounts')}
    </Link>
  );
  if (page?.status === 'failed')
    return (
      <>
        <PageHeader title={t('Account')} id="admin-title" back={back} />
        <Alert tone="error">{t('The account could not be loaded.')}</Alert>
      </>
    );
  const a = page?.account;
  if (!a)
    return (
      <>
        <PageHeader title={t('Account')} id="admin-title" back={back} />
        <p class="text-sm text-muted" role="status">
          {t('Loading…')}
        </p>
      </>
    );
  return (
    <>
      <PageHeader title={a.email} id="admin-title" back={back} description={a.name ?? undefined} />
      <div class="space-y-6">
        {a.locked && (
          <Alert id="admin-locked" tone="warning">
            {t('Locked')} {dateTime(a['locked-at'])}
            {a['locked-reason'] ? `: ${a['locked-reason']}` : ''}
          </Alert>
        )}
        <Card title={t('Account')}>
          <DataList
            id="admin-account"
            data-status={a.locked ? 'locked' : 'active'}
            items={[
              [
                t('Email'),
                <>
                  {a.email} {a['email-verified'] ? <Badge tone="success">{t('Verified')}</Badge> : <Badge tone="warning">{t('Unverified')}</Badge>}
                </>,
                'email',
              ],
              [t('Created'), dateTime(a['created-at']), 'created-at'],
              [t('Last seen'), dateTime(a['last-seen-at']), 'last-seen-at'],
              [t('Two-factor authentication'), a['two-factor-enabled'] ? t('On') : t('Off'), 'two-factor'],
              [t('Live sessions'), a['session-count'], 'session-count'],
              [t('Subscription'), a.subscription.status === 'none' ? t('None') : subscriptionText(a.subscription), 'subscription'],
              a['platform-admin'] && [t('Platform admin'), t('Yes'), 'platform-admin'],
            ]}
          />
        </Card>
        <Card title={t('Organizations')}>
          <Table
            id="admin-account-orgs"
            caption={t("The account's organizations")}
            headers={[t('Name'), t('Role'), t('Subscription')]}
            rows={a.organizations}
            empty={t('No organization.')}
            render={(o) => (
              <tr key={o.id} data-org={o.id}>
                <OrgNameCell org={o} />
                <td>{roleName(o.role)}</td>
                <td>{subscriptionText(o.subscription)}</td>
              </tr>
            )}
          />
        </Card>
        {a.identities.length > 0 && (
          <Card title={t('Sign-in providers')}>
            <Table
              id="admin-account-identities"
              caption={t('Linked providers')}
              headers={[t('Provider'), t('Email'), t('Linked'), t('Last used')]}
              rows={a.identities}
              empty={t('None.')}
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
