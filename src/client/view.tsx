/**
 * The view (Preact): the root subscribes to the event core and renders the state; components
 * dispatch events. The shell (navigation, the unverified-account banner, toasts) and the auth pages
 * live here; the account lifecycle's pages in account/pages.tsx.
 */
import type { ComponentChildren, FunctionComponent } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { SIGNED_IN_ROUTES, type AppState, type Route } from './app.js';
import { ConfirmEmailPage, DeleteAccountPage, ForgotPasswordPage, ResetPasswordPage, SessionsPage, SettingsPage, VerifyEmailPage } from './account/pages.js';
import { BillingPage } from './billing/pages.js';
import type { EventCore } from './core.js';
import { AuditLogPage } from './audit/pages.js';
import { MfaStep, PasskeySignIn, PasskeysSection, TwoFactorSection } from './account/security-pages.js';
import { OauthNotice, ProviderButtons, SignInMethods } from './oidc/pages.js';
import { AcceptInvitationPage, OrgPage, OrgSwitcher, OrgsPage } from './orgs/pages.js';
import { ApiKeysPage } from './api-keys/pages.js';
import { AdminAccountPage, AdminAccountsPage, AdminAuditPage, AdminNavLink, AdminOrgsPage, AdminStatsPage, ImpersonationBanner } from './admin/pages.js';
import { App, Field, Form, Link, Submit, useApp } from './ui.js';

function LogInPage() {
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

function SignUpPage() {
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

function AccountPage() {
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

const PAGES: Record<Route, FunctionComponent> = {
  'log-in': LogInPage,
  'sign-up': SignUpPage,
  account: AccountPage,
  'forgot-password': ForgotPasswordPage,
  'reset-password': ResetPasswordPage,
  'verify-email': VerifyEmailPage,
  'confirm-email': ConfirmEmailPage,
  settings: SettingsPage,
  sessions: SessionsPage,
  'delete-account': DeleteAccountPage,
  orgs: OrgsPage,
  org: OrgPage,
  'org-audit': AuditLogPage,
  'org-api-keys': ApiKeysPage,
  'accept-invitation': AcceptInvitationPage,
  billing: BillingPage,
  admin: AdminAccountsPage,
  'admin-account': AdminAccountPage,
  'admin-orgs': AdminOrgsPage,
  'admin-stats': AdminStatsPage,
  'admin-audit': AdminAuditPage,
};

/** Navigation between the signed-in pages, and log-out. */
function Nav() {
  const { state, dispatch } = useApp();
  return (
    <header>
      <nav aria-label="Account">
        <Link to="account" id="nav-account">Account</Link>
        <Link to="settings" id="nav-settings">Settings</Link>
        <Link to="sessions" id="nav-sessions">Sessions</Link>
        <Link to="orgs" id="nav-orgs">Organizations</Link>
        <AdminNavLink />
        <OrgSwitcher />
        <button id="log-out" type="button" class="secondary" disabled={state.busy} onClick={() => dispatch(['log-out'])}>Log out</button>
      </nav>
    </header>
  );
}

/** Shown on every signed-in page while the account's address is unverified. */
function VerifyBanner() {
  const { state, dispatch } = useApp();
  if (state.account?.['email-verified'] !== false) return null;
  return (
    <div id="verify-banner" class="banner" role="status">
      Please verify your email address: we sent a link to {state.account.email}.{' '}
      <button id="resend-verification" type="button" class="link" disabled={state.busy} onClick={() => dispatch(['verification/resend'])}>Resend</button>
    </div>
  );
}

function Toasts() {
  const { state, dispatch } = useApp();
  return (
    <div class="toasts" aria-live="polite">
      {state.toasts.map((t) => (
        <div key={t.id} class={`toast ${t.kind ?? 'error'}`} role={t.kind === 'info' ? 'status' : 'alert'} data-toast={t.id} onClick={() => dispatch(['toast/dismiss', t.id])}>
          {t.message}
        </div>
      ))}
    </div>
  );
}

function Shell({ state, children }: { state: AppState; children: ComponentChildren }) {
  const signedIn = SIGNED_IN_ROUTES.has(state.route) && Boolean(state.token);
  return (
    <>
      {signedIn && <Nav />}
      <main class={signedIn ? 'wide' : undefined}>
        <ImpersonationBanner />
        {signedIn && <VerifyBanner />}
        {children}
      </main>
      <Toasts />
    </>
  );
}

/** The root: renders the core's state, enters pages, and keeps visitors without a session off signed-in pages. */
export function Root({ core }: { core: EventCore<AppState> }) {
  const [state, setState] = useState(core.state);
  useLayoutEffect(() => {
    const unsubscribe = core.subscribe(setState);
    setState(core.state); // an event may have run between the first render and the subscription
    return () => { unsubscribe(); };
  }, [core]);
  const dispatch = useMemo(() => core.dispatch.bind(core), [core]);

  const allowed = !SIGNED_IN_ROUTES.has(state.route) || Boolean(state.token);
  useEffect(() => {
    if (!state.ready) return;
    if (allowed) {
      dispatch(['page/enter', state.route, location.search]);
      dispatch(['orgs/page-enter', state.route, location.search]);
      dispatch(['oidc/page-enter', state.route, location.search]);
      dispatch(['admin/page-enter', state.route]);
    }
    else dispatch(['router/navigate', { route: 'log-in' }]);
  }, [state.route, state.ready, allowed]);

  const Page = PAGES[state.route];
  return (
    <App.Provider value={{ state, dispatch }}>
      <Shell state={state}>{state.ready && allowed ? <Page /> : <p class="muted">Loading…</p>}</Shell>
    </App.Provider>
  );
}
