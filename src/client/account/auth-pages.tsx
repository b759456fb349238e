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
import { SsoSignIn } from '../sso/pages.js';
import { MfaStep, PasskeySignIn } from './security-pages.js';
import { EmailSignInCard } from './email-sign-in-pages.js';
import { dateOnly } from '../ui/dates.js';

export function LogInPage() {
  const { state, dispatch } = useApp();
  // the password was right; the account asks for a second factor
  if (state.mfa) return <MfaStep />;
  return (
    <Narrow>
      <PageHeader title="Log in" description={`Welcome back to ${state.product?.name ?? 'your account'}.`} />
      <OauthNotice route="log-in" />
      <Card>
        <Form id="log-in" onSubmit={(f) => dispatch(['log-in/submit', f])}>
          <Field form="log-in" name="email" label="Email" type="email" required autoComplete="username" />
          <Field form="log-in" name="password" label="Password" type="password" required autoComplete="current-password" />
          <Submit>Log in</Submit>
        </Form>
        <PasskeySignIn />
        <EmailSignInCard />
        <ProviderButtons verb="Log in" />
        <SsoSignIn />
      </Card>
      <p class="text-sm">
        <Link to="forgot-password" id="forgot-password-link">
          Forgot password?
        </Link>
      </p>
      <p class="text-sm">
        No account? <Link to="sign-up">Sign up</Link>
      </p>
    </Narrow>
  );
}

export function SignUpPage() {
  const { state, dispatch } = useApp();
  return (
    <Narrow>
      <PageHeader title="Sign up" description={`Create your ${state.product?.name ?? ''} account: it takes a minute.`} />
      <Card>
        <Form id="sign-up" onSubmit={(f) => dispatch(['sign-up/submit', f])}>
          <Field form="sign-up" name="name" label="Name" maxLength={100} autoComplete="name" />
          <Field form="sign-up" name="email" label="Email" type="email" required autoComplete="username" />
          <Field
            form="sign-up"
            name="password"
            label="Password (8+ characters)"
            type="password"
            required
            minLength={8}
            maxLength={128}
            autoComplete="new-password"
          />
          <Field form="sign-up" name="confirm-password" label="Confirm password" type="password" required autoComplete="new-password" />
          <Submit>Create account</Submit>
        </Form>
        <ProviderButtons verb="Sign up" />
      </Card>
      <p class="text-sm">
        Have an account? <Link to="log-in">Log in</Link>
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
        <PageHeader title="Dashboard" />
        <p class="text-sm text-muted">Loading account…</p>
      </>
    );
  const s = a.subscription;
  return (
    <>
      <PageHeader
        title="Dashboard"
        description={`Signed in as ${a.email}`}
        actions={
          <Button id="reload" variant="secondary" onClick={() => dispatch(['account/load'])}>
            Reload
          </Button>
        }
      />
      <Stack>
        <OauthNotice route="account" />
        <Stack columns={2}>
          <Card
            title="Your account"
            id="account-card"
            actions={
              <ButtonLink to="settings" variant="secondary">
                Edit profile
              </ButtonLink>
            }
          >
            <DataList
              id="account"
              items={[
                ['Email', a.email, 'email'],
                a['email-verified'] !== undefined && ['Verified', a['email-verified'] ? 'yes' : 'no', 'email-verified'],
                ['Name', a.name ?? '—', 'name'],
                ['Member since', dateOnly(a['created-at'], '')],
                [
                  'Subscription',
                  `${s.status}${s.plan ? ` (${s.plan})` : ''}${s['current-period-end'] ? `, renews ${dateOnly(s['current-period-end'], '')}` : ''}`,
                  'subscription',
                ],
              ]}
            />
          </Card>
          <Card
            title="Security"
            id="security-card"
            actions={
              <ButtonLink to="security" variant="secondary">
                Open security
              </ButtonLink>
            }
          >
            <p>
              Two-factor authentication: <Badge tone={a['two-factor-enabled'] ? 'success' : 'warning'}>{a['two-factor-enabled'] ? 'on' : 'off'}</Badge>
            </p>
            <p class="text-muted">Passwords, two-factor, passkeys and the providers you sign in with.</p>
          </Card>
        </Stack>
        <Card
          title="Organizations"
          id="dashboard-orgs"
          actions={
            <ButtonLink to="orgs" variant="secondary">
              All organizations
            </ButtonLink>
          }
        >
          {!state.orgs ? (
            <p class="text-muted">Loading organizations…</p>
          ) : (
            <ul class="divide-y divide-line">
              {state.orgs.map((o) => (
                <li key={o.id} class="flex flex-wrap items-center justify-between gap-2 py-2">
                  <Link to="org" path={`/orgs/${o.id}`}>
                    {o.name}
                  </Link>
                  <span class="text-muted">
                    {o.personal ? 'personal · ' : ''}
                    {o.role}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <Actions>
            <ButtonLink to="orgs" id="dashboard-create-org" variant="primary">
              Create an organization
            </ButtonLink>
          </Actions>
        </Card>
      </Stack>
    </>
  );
}
