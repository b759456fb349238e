/**
 * The view's root (Preact): it subscribes to the event core and renders the state in the shell
 * (layout.tsx); components dispatch events. After a navigation the focus moves to the new page's
 * title, and the document's title follows the route.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { EventCore } from '../core.js';
import { App } from '../ui/app.js';
import { Toasts } from '../ui/toast.js';
import type { Feature, Router } from './features.js';
import { AppShell, PublicShell } from './layout.js';
import { ReauthDialog } from './reauth-dialog.js';
import type { AppState } from './state.js';
import { t } from '../i18n/words.js';

/** The root: renders the core's state, enters pages, keeps visitors without a session off signed-in pages, moves the focus. */
export function Root({ core, router, features, logIn }: { core: EventCore<AppState>; router: Router; features: readonly Feature[]; logIn: string }) {
  const [state, setState] = useState(core.state);
  useLayoutEffect(() => {
    const unsubscribe = core.subscribe(setState);
    setState(core.state); // an event may have run between the first render and the subscription
    return () => {
      unsubscribe();
    };
  }, [core]);
  const dispatch = useMemo(() => core.dispatch.bind(core), [core]);
  const context = useMemo(() => ({ state, dispatch, router }), [state, dispatch, router]);

  const def = router.def(state.route);
  const signedInOnly = def?.access === 'signed-in';
  const allowed = !signedInOnly || Boolean(state.token);
  const path = typeof location === 'undefined' ? '' : location.pathname;
  // the focus moves to the new page's title after a navigation (not on the first load)
  const pendingFocus = useRef(false);
  const firstEntry = useRef(true);
  useEffect(() => {
    if (!state.ready) return;
    if (!allowed) {
      dispatch(['router/navigate', { route: logIn }]);
      return;
    }
    if (!firstEntry.current) pendingFocus.current = true;
    firstEntry.current = false;
    for (const f of features) if (f.enter) dispatch([f.enter, state.route, location.search]);
  }, [state.route, path, state.ready, allowed]);
  useEffect(() => {
    document.title = def ? `${t(def.title)} · ${state.product?.name ?? 'SaaS'}` : (state.product?.name ?? 'SaaS');
    if (!pendingFocus.current) return;
    const title = document.querySelector<HTMLElement>('[data-page-title]');
    if (title) {
      title.focus();
      pendingFocus.current = false;
    }
  });

  const Page = def?.page;
  const page =
    state.ready && allowed && Page ? (
      <Page />
    ) : (
      <p class="text-sm text-muted" role="status">
        {t('Loading…')}
      </p>
    );
  return (
    <App.Provider value={context}>
      {signedInOnly && state.token ? <AppShell features={features}>{page}</AppShell> : <PublicShell features={features}>{page}</PublicShell>}
      {state.reauth && <ReauthDialog />}
      <Toasts />
    </App.Provider>
  );
}
