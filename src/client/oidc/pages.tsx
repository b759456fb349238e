/**
 * Provider sign-in's parts of the pages: the "Continue with …" buttons (log-in, sign-up), the
 * callback's outcome as a sentence, and the account page's sign-in methods.
 */
import { Link, useApp } from '../ui.js';
import type { Route } from '../app.js';
import { oauthErrorMessage, providerName, startPath } from './events.js';

const day = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleDateString() : '—');

/** One link per configured provider; nothing while none is configured. */
export function ProviderButtons({ verb }: { verb: string }) {
  const { state } = useApp();
  const providers = state.providers ?? [];
  if (providers.length === 0) return null;
  return (
    <div id="providers" class="providers">
      <p class="muted or">or</p>
      {providers.map((p) => (
        <a key={p.id} class="button secondary provider" data-provider={p.id} href={startPath(p.id)}>{verb} with {p.name}</a>
      ))}
    </div>
  );
}

/** What the provider's callback said, on the page it landed on. */
export function OauthNotice({ route }: { route: Route }) {
  const { state, dispatch } = useApp();
  const notice = state.oauthNotice;
  if (!notice || notice.route !== route) return null;
  const name = providerName(state, notice.provider);
  const error = notice.kind === 'error';
  return (
    <p id="oauth-notice" class={error ? 'banner error' : 'banner'} role={error ? 'alert' : 'status'} data-code={notice.code}>
      {error ? oauthErrorMessage(notice.code, name) : `${name} is linked: you can sign in with it from now on.`}{' '}
      <button type="button" class="link" onClick={() => dispatch(['oidc/dismiss-notice'])}>Dismiss</button>
    </p>
  );
}

/** The account's ways to sign in: its password, its linked providers (unlink), and the providers to link. */
export function SignInMethods() {
  const { state, dispatch } = useApp();
  const methods = state.signInMethods;
  const providers = state.providers ?? [];
  if (!methods) return null;
  const unlinking = new Set(state.unlinking);
  // the last way to sign in cannot go (the server answers 409 too)
  const lastWay = !methods.hasPassword && methods.identities.length === 1;
  return (
    <section aria-labelledby="sign-in-methods-title">
      <h2 id="sign-in-methods-title">Sign-in methods</h2>
      <p id="password-method" data-has-password={String(methods.hasPassword)}>
        Password: {methods.hasPassword ? 'set' : <>none yet. To set one, use <Link to="forgot-password" id="set-password-link">Forgot password</Link>: we email you a link.</>}
      </p>
      {methods.identities.length > 0 && (
        <table id="identities">
          <thead><tr><th scope="col">Provider</th><th scope="col">Email there</th><th scope="col">Linked</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
          <tbody>
            {methods.identities.map((i) => (
              <tr key={i.id} data-identity={i.id} data-provider={i.provider}>
                <td>{providerName(state, i.provider)}</td>
                <td data-field="email">{i.email ?? '—'}</td>
                <td>{day(i['created-at'])}</td>
                <td>
                  <button type="button" class="secondary unlink" disabled={unlinking.has(i.id) || lastWay}
                    title={lastWay ? 'Your only way to sign in: set a password or link another provider first' : undefined}
                    onClick={() => dispatch(['identities/unlink', i.id])}>Unlink</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {providers.length > 0 && (
        // linking adds a way in: an account with a password confirms it (the server asks; without one, a recent sign-in)
        <form id="link-provider" class="link-providers" onSubmit={(e) => {
          e.preventDefault();
          const provider = ((e as SubmitEvent).submitter as HTMLButtonElement | null)?.value;
          const password = (e.currentTarget.elements.namedItem('password') as HTMLInputElement | null)?.value;
          if (provider) dispatch(['identities/link', provider, password]);
        }}>
          {methods.hasPassword && (
            <div class="field">
              <label for="link-provider-password">Your password (to link a provider)</label>
              <input id="link-provider-password" name="password" type="password" required autoComplete="current-password" />
            </div>
          )}
          {providers.map((p) => (
            <button key={p.id} type="submit" name="provider" value={p.id} class="secondary" data-link-provider={p.id} disabled={state.busy}>
              Link {p.name}
            </button>
          ))}
        </form>
      )}
    </section>
  );
}
