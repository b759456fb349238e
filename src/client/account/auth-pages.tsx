/**
 * The visitor's pages (log-in, with its second step and passkey and provider sign-in; sign-up)
 * and the account page. They read the state and dispatch the shell's and the account's events.
 */
import { Field, Form, Link, Submit, useApp } from '../ui/app.js';
import { OauthNotice, ProviderButtons, SignInMethods } from '../oidc/pages.js';
import { MfaStep, PasskeySignIn, PasskeysSection, TwoFactorSection } from './security-pages.js';

export function LogInPage() {
  const { state, dispatch } = useApp();
  // the password was right; the account asks for a second factor
  if (state.mfa) return <MfaStep />;
  return (
    <>
      <h1>Log in</h1>
      <OauthNotice route="log-in" />
      <Form id="log-in" onSubmit={(f) => dispatch(['log-in/submit', f])}>
        <Field form="log-in" name="email" label="Email" type="email" required autoComplete="username" />
        <Field form="log-in" name="password" label="Password" type="password" required autoComplete="current-password" />
        <Submit>Log in</Submit>
      </Form>
      <PasskeySignIn />
      <ProviderButtons verb="Log in" />
      <p><Link to="forgot-password" id="forgot-password-link">Forgot password?</Link></p>
      <p>No account? <Link to="sign-up">Sign up</Link></p>
    </>
  );
}

export function SignUpPage() {
  const { dispatch } = useApp();
  return (
    <>
      <h1>Sign up</h1>
      <Form id="sign-up" onSubmit={(f) => dispatch(['sign-up/submit', f])}>
        <Field form="sign-up" name="name" label="Name" maxLength={100} autoComplete="name" />
        <Field form="sign-up" name="email" label="Email" type="email" required autoComplete="username" />
        <Field form="sign-up" name="password" label="Password (8+ characters)" type="password" required minLength={8} maxLength={128} autoComplete="new-password" />
        <Field form="sign-up" name="confirm-password" label="Confirm password" type="password" required autoComplete="new-password" />
        <Submit>Create account</Submit>
      </Form>
      <ProviderButtons verb="Sign up" />
      <p>Have an account? <Link to="log-in">Log in</Link></p>
    </>
  );
}

const date = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleDateString() : '');

export function AccountPage() {
  const { state, dispatch } = useApp();
  const a = state.account;
  if (!a) return <p class="muted">Loading account…</p>;
  const s = a.subscription;
  return (
    <>
      <h1>Your account</h1>
      <OauthNotice route="account" />
      <dl id="account">
        <dt>Email</dt><dd data-field="email">{a.email}</dd>
        {a['email-verified'] !== undefined && <><dt>Verified</dt><dd data-field="email-verified">{a['email-verified'] ? 'yes' : 'no'}</dd></>}
        <dt>Name</dt><dd data-field="name">{a.name ?? '—'}</dd>
        <dt>Member since</dt><dd>{date(a['created-at'])}</dd>
        <dt>Subscription</dt>
        <dd data-field="subscription">{s.status}{s.plan ? ` (${s.plan})` : ''}{s['current-period-end'] ? `, renews ${date(s['current-period-end'])}` : ''}</dd>
      </dl>
      <button id="reload" type="button" onClick={() => dispatch(['account/load'])}>Reload</button>
      <TwoFactorSection />
      <PasskeysSection />
      <SignInMethods />
    </>
  );
}
