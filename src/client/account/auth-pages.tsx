/**
 * The visitor's pages (log-in, with its second step and passkey and provider sign-in; sign-up)
 * and the signed-in home (the dashboard). They read the state and dispatch the shell's and the
 * account's events.
 */
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink, Submit } from '../ui/button.js';
import { Card, DataList, Narrow, Stack, Actions } from '../ui/card.js';
import { Badge } from '../ui/feedback.js';
import { Field, Form } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { OauthNotice, ProviderButtons } from '../oidc/pages.js';
import { SsoSignIn } from '../sso/sign-in.js';
import { MfaStep, PasskeySignIn } from './security-pages.js';
import { EmailSignInCard } from './email-sign-in-pages.js';
import { dateOnly } from '../ui/dates.js';
import { t } from '../i18n/words.js';
import { roleName } from '../orgs/roles.js';
import { subscriptionStatusText } from '../billing/status-words.js';

export function LogInPage() {
  const { state, dispatch } = useApp();
  // the password was right; the account asks for a second factor
  if (state.mfa) return <MfaStep />;
  return (
    <Narrow>
      <PageHeader title={t('Log in')} description={state.product?.name ? t('Welcome back to {name}.', { name: state.product.name }) : t('Welcome back.')} />
      <OauthNotice route="log-in" />
      <Card>
        <Form id="log-in" onSubmit={(f) => dispatch(['log-in/submit', f])}>
          <Field form="log-in" name="email" label={t('Email')} type="email" required autoComplete="username" />
          <Field form="log-in" name="password" label={t('Password')} type="password" required autoComplete="current-password" />
          <Submit>{t('Log in')}</Submit>
        </Form>
        <PasskeySignIn />
        <EmailSignInCard />
        <ProviderButtons action="log-in" />
        <SsoSignIn />
      </Card>
      <p class="text-sm">
        <Link to="forgot-password" id="forgot-password-link">
          {t('Forgot password?')}
        </Link>
      </p>
      <p class="text-sm">
        {t('No account?')} <Link to="sign-up">{t('Sign up')}</Link>
      </p>
    </Narrow>
  );
}

export function SignUpPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title={t('Sign up')} description={t('Create your {name} account: it takes a minute.', { name: state.product?.name ?? '' })} />
      <Card>
        <Form id="sign-up" onSubmit={(f) => dispatch(['sign-up/submit', f])}>
          <Field form="sign-up" name="name" label={t('Name')} maxLength={100} autoComplete="name" />
          <Field form="sign-up" name="email" label={t('Email')} type="email" required autoComplete="username" />
          <Field
            form="sign-up"
            name="password"
            label={t('Password (8+ characters)')}
            type="password"
            required
            minLength={8}
            maxLength={128}
            autoComplete="new-password"
          />
          <Field form="sign-up" name="confirm-password" label={t('Confirm password')} type="password" required autoComplete="new-password" />
          <Submit>{t('Create account')}</Submit>
        </Form>
        <ProviderButtons action="sign-up" />
      </Card>
      <p class="text-sm">
        {t('Have an account?')} <Link to="log-in">{t('Log in')}</Link>
      </p>
    </Narrow>
  );
}

/** The signed-in home: the account at a glance, its organizations, where to go next. */
export function AccountPage() {
  const { state, dispatch } = useApp();
  const a = state.account;
  if (!a)
    return (
      <>
        <PageHeader title={t('Dashboard')} />
        <p class="text-sm text-muted">{t('Loading account…')}</p>
      </>
    );
  const s = a.subscription;
  return (
    <>
      <PageHeader
        title={t('Dashboard')}
        description={t('Signed in as {email}', { email: a.email })}
        actions={
          <Button id="reload" variant="secondary" onClick={() => dispatch(['account/load'])}>
            {t('Reload')}
          </Button>
        }
      />
      <Stack>
        <OauthNotice route="account" />
        <Stack columns={2}>
          <Card
            title={t('Your account')}
            id="account-card"
            actions={
              <ButtonLink to="settings" variant="secondary">
                {t('Edit profile')}
              </ButtonLink>
            }
          >
            <DataList
              id="account"
              items={[
                [t('Email'), a.email, 'email'],
                a['email-verified'] !== undefined && [t('Verified'), a['email-verified'] ? t('yes') : t('no'), 'email-verified'],
                [t('Name'), a.name ?? '—', 'name'],
                [t('Member since'), dateOnly(a['created-at'], '')],
                [
                  t('Subscription'),
                  s['current-period-end']
                    ? t('{status} ({plan}), renews {date}', {
                        status: subscriptionStatusText(s.status),
                        plan: s.plan ?? '—',
                        date: dateOnly(s['current-period-end'], ''),
                      })
                    : s.plan
                      ? t('{status} ({plan})', { status: subscriptionStatusText(s.status), plan: s.plan })
                      : subscriptionStatusText(s.status),
                  'subscription',
                ],
              ]}
            />
          </Card>
          <Card
            title={t('Security')}
            id="security-card"
            actions={
              <ButtonLink to="security" variant="secondary">
                {t('Open security')}
              </ButtonLink>
            }
          >
            <p>
              {t('Two-factor authentication:')}{' '}
              <Badge tone={a['two-factor-enabled'] ? 'success' : 'warning'}>{a['two-factor-enabled'] ? t('on') : t('off')}</Badge>
            </p>
            <p class="text-muted">{t('Passwords, two-factor, passkeys and the providers you sign in with.')}</p>
          </Card>
        </Stack>
        <Card
          title={t('Organizations')}
          id="dashboard-orgs"
          actions={
            <ButtonLink to="orgs" variant="secondary">
              {t('All organizations')}
            </ButtonLink>
          }
        >
          {!state.orgs ? (
            <p class="text-muted">{t('Loading organizations…')}</p>
          ) : (
            <ul class="divide-y divide-line">
              {state.orgs.map((o) => (
                <li key={o.id} class="flex flex-wrap items-center justify-between gap-2 py-2">
                  <Link to="org" path={`/orgs/${o.id}`}>
                    {o.name}
                  </Link>
                  <span class="text-muted">
                    {o.personal ? t('personal · ') : ''}
                    {roleName(o.role)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <Actions>
            <ButtonLink to="orgs" id="dashboard-create-org" variant="primary">
              {t('Create an organization')}
            </ButtonLink>
          </Actions>
        </Card>
      </Stack>
    </>
  );
}
