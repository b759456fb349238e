/**
 * The view's root (Preact): it subscribes to the event core and renders the state; components
 * dispatch events. The shell around the pages (navigation, the unverified-account banner,
 * toasts) lives here; the pages come from the features' routes.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import type { EventCore } from '../core.js';
import { App, Link, useApp } from '../ui/app.js';
import type { Feature, Router } from './features.js';
import type { AppState } from './state.js';

/** Navigation between the signed-in pages, what the features add to the header, and log-out. */
function Nav({ features }: { features: readonly Feature[] }) {
  const { state, dispatch } = useApp();
  return (
    <header>
      <nav aria-label="Account">
        <Link to="account" id="nav-account">Account</Link>
        <Link to="settings" id="nav-settings">Settings</Link>
        <Link to="sessions" id="nav-sessions">Sessions</Link>
        <Link to="orgs" id="nav-orgs">Organizations</Link>
        {features.map((f) => f.header && <f.header key={f.id} />)}
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

function Shell({ signedIn, features, children }: { signedIn: boolean; features: readonly Feature[]; children: ComponentChildren }) {
  return (
    <>
      {signedIn && <Nav features={features} />}
      <main class={signedIn ? 'wide' : undefined}>
        {signedIn && <VerifyBanner />}
        {children}
      </main>
      <Toasts />
    </>
  );
}

/** The root: renders the core's state, enters pages, and keeps visitors without a session off signed-in pages. */
export function Root({ core, router, features, logIn }: { core: EventCore<AppState>; router: Router; features: readonly Feature[]; logIn: string }) {
  const [state, setState] = useState(core.state);
  useLayoutEffect(() => {
    const unsubscribe = core.subscribe(setState);
    setState(core.state); // an event may have run between the first render and the subscription
    return () => { unsubscribe(); };
  }, [core]);
  const dispatch = useMemo(() => core.dispatch.bind(core), [core]);
  const context = useMemo(() => ({ state, dispatch, router }), [state, dispatch, router]);

  const def = router.def(state.route);
  const signedInOnly = def?.access === 'signed-in';
  const allowed = !signedInOnly || Boolean(state.token);
  useEffect(() => {
    if (!state.ready) return;
    if (!allowed) {
      dispatch(['router/navigate', { route: logIn }]);
      return;
    }
    for (const f of features) if (f.enter) dispatch([f.enter, state.route, location.search]);
  }, [state.route, state.ready, allowed]);

  const Page = def?.page;
  return (
    <App.Provider value={context}>
      <Shell signedIn={signedInOnly && Boolean(state.token)} features={features}>{state.ready && allowed && Page ? <Page /> : <p class="muted">Loading…</p>}</Shell>
    </App.Provider>
  );
}
