/**
 * The account lifecycle's pages: the link pages (verify-email, confirm-email, reset-password),
 * forgot password, settings, sessions and account deletion. They read the state and dispatch
 * the events of account/events.ts.
 */
import { Field, Form, Link, Submit, useApp } from '../ui/app.js';
import type { TokenRoute } from './events.js';

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** What a link page shows while its token is checked, and after. */
function TokenOutcome({ route, done }: { route: TokenRoute; done: string }) {
  const { state } = useApp();
  const page = state.tokenPage?.route === route ? state.tokenPage : undefined;
  const status = page?.status ?? 'checking';
  return (
    <>
      <p id="token-status" data-status={status} role={status === 'failed' ? 'alert' : 'status'} class={status === 'failed' ? 'error' : undefined}>
        {status === 'checking' ? 'Checking the link…' : status === 'done' ? done : page?.message}
      </p>
      <p>{state.token ? <Link to="account">Go to your account</Link> : <Link to="log-in">Log in</Link>}</p>
    </>
  );
}

export function VerifyEmailPage() {
  return (
    <>
      <h1>Verify your email</h1>
      <TokenOutcome route="verify-email" done="Your email address is verified." />
    </>
  );
}

export function ConfirmEmailPage() {
  return (
    <>
      <h1>Confirm your new email</h1>
      <TokenOutcome route="confirm-email" done="Your new email address is confirmed; use it to log in from now on." />
    </>
  );
}

export function ForgotPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <>
      <h1>Forgot password</h1>
      {state.forgotSent ? (
        <p id="forgot-password-sent" role="status">If an account exists for that address, a link to reset its password is on its way. It works for one hour.</p>
      ) : (
        <Form id="forgot-password" onSubmit={(f) => dispatch(['forgot-password/submit', f])}>
          <p class="muted">Enter your account's email and we'll send you a link to set a new password.</p>
          <Field form="forgot-password" name="email" label="Email" type="email" required autoComplete="username" />
          <Submit>Send reset link</Submit>
        </Form>
      )}
      <p><Link to="log-in">Back to log in</Link></p>
    </>
  );
}

export function ResetPasswordPage() {
  const { state, dispatch } = useApp();
  return (
    <>
      <h1>Set a new password</h1>
      {state.resetToken ? (
        <Form id="reset-password" onSubmit={(f) => dispatch(['reset-password/submit', f])}>
          <Field form="reset-password" name="password" label="New password (8+ characters)" type="password" required minLength={8} maxLength={128} autoComplete="new-password" />
          <Field form="reset-password" name="confirm-password" label="Confirm new password" type="password" required autoComplete="new-password" />
          <Submit>Set new password</Submit>
        </Form>
      ) : (
        <p id="reset-password-missing" class="error" role="alert">
          This link has no token. Open the link from the email again, or <Link to="forgot-password">ask for a new one</Link>.
        </p>
      )}
    </>
  );
}

export function SettingsPage() {
  const { state, dispatch } = useApp();
  const a = state.account;
  if (!a) return <p class="muted">Loading account…</p>;
  return (
    <>
      <h1>Settings</h1>
      <section aria-labelledby="settings-name-title">
        <h2 id="settings-name-title">Name</h2>
        <Form id="settings-name" onSubmit={(f) => dispatch(['settings/save-name', f])}>
          <Field form="settings-name" name="name" label="Name" required maxLength={100} autoComplete="name" defaultValue={a.name ?? ''} />
          <Submit>Save name</Submit>
        </Form>
      </section>

      <section aria-labelledby="change-email-title">
        <h2 id="change-email-title">Email</h2>
        <p>Your email is <strong data-field="email">{a.email}</strong>.</p>
        {state.emailChangeSentTo && (
          <p id="change-email-sent" role="status">Check your new inbox: we sent a confirmation link to <strong>{state.emailChangeSentTo}</strong>. Your email changes when you open it.</p>
        )}
        <Form id="change-email" onSubmit={(f) => dispatch(['settings/change-email', f])}>
          <Field form="change-email" name="new-email" label="New email" type="email" required autoComplete="email" />
          <Field form="change-email" name="password" label="Your password (to confirm)" type="password" required autoComplete="current-password" />
          <Submit>Change email</Submit>
        </Form>
      </section>

      <section aria-labelledby="change-password-title">
        <h2 id="change-password-title">Password</h2>
        <Form id="change-password" onSubmit={(f) => dispatch(['settings/change-password', f])}>
          <Field form="change-password" name="current-password" label="Current password" type="password" required autoComplete="current-password" />
          <Field form="change-password" name="password" label="New password (8+ characters)" type="password" required minLength={8} maxLength={128} autoComplete="new-password" />
          <Field form="change-password" name="confirm-password" label="Confirm new password" type="password" required autoComplete="new-password" />
          <Submit>Change password</Submit>
        </Form>
        <p class="muted">Changing it ends your sessions on other devices.</p>
      </section>

      <section aria-labelledby="data-title">
        <h2 id="data-title">Your data</h2>
        <p>
          <button id="export" type="button" class="secondary" disabled={state.busy} onClick={() => dispatch(['account/export'])}>Download my data (JSON)</button>
        </p>
        <p><Link to="delete-account" id="delete-account-link">Delete account…</Link></p>
      </section>
    </>
  );
}

export function SessionsPage() {
  const { state, dispatch } = useApp();
  const sessions = state.sessions;
  if (!sessions) return <><h1>Sessions</h1><p class="muted">Loading sessions…</p></>;
  const ending = new Set(state.endingSessions);
  const others = sessions.filter((s) => !s.current);
  return (
    <>
      <h1>Sessions</h1>
      <p class="muted">Each log-in is a session. End the ones you don't recognise.</p>
      <table id="sessions">
        <thead>
          <tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Started</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Action</span></th></tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr key={s.id} data-session={s.id} data-current={s.current ? 'true' : undefined}>
              <td data-field="user-agent">{s['user-agent'] ?? 'Unknown device'}</td>
              <td data-field="ip">{s.ip ?? '—'}</td>
              <td data-field="created-at">{when(s['created-at'])}</td>
              <td data-field="last-used-at">{when(s['last-used-at'])}</td>
              <td>
                {s.current ? (
                  <span class="badge">This session</span>
                ) : (
                  <button type="button" class="secondary end-session" disabled={ending.has(s.id)} onClick={() => dispatch(['sessions/end', s.id])}>End</button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        <button id="end-other-sessions" type="button" disabled={others.length === 0 || others.every((s) => ending.has(s.id))} onClick={() => dispatch(['sessions/end-others'])}>
          End all other sessions
        </button>
      </p>
    </>
  );
}

export function DeleteAccountPage() {
  const { state, dispatch } = useApp();
  const email = state.account?.email ?? '';
  return (
    <>
      <h1>Delete account</h1>
      <p>
        This deletes your account, its sessions and memberships, and organizations only you own. It cannot be undone;{' '}
        <Link to="settings">download your data</Link> first if you want a copy.
      </p>
      <Form id="delete-account" onSubmit={(f) => dispatch(['account/delete', f])}>
        <Field form="delete-account" name="confirm-email" label={`Type your email (${email}) to confirm`} type="text" required autoComplete="off" spellcheck={false} />
        <Field form="delete-account" name="password" label="Password" type="password" required autoComplete="current-password" />
        <Submit danger>Delete my account</Submit>
      </Form>
    </>
  );
}
