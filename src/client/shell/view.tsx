/**
 * The view's root (Preact) and the shell around the pages. The root subscribes to the event
 * core and renders the state; components dispatch events. Signed in, the shell is a header
 * (product, the features' header parts such as the organization switcher, theme, account menu),
 * a side navigation made of the features' links (a menu button opens it below 768 px) and the
 * page; public pages get a slim header and a footer. After a navigation the focus moves to the
 * new page's title, and the document's title follows the route.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { LogOut, Menu, Moon, Sun, X } from 'lucide';
import type { EventCore } from '../core.js';
import { App, Link, plainClick, useApp } from '../ui/app.js';
import { Button, ButtonLink } from '../ui/button.js';
import { Alert } from '../ui/feedback.js';
import { Icon } from '../ui/icon.js';
import { Toasts } from '../ui/toast.js';
import { FormDialog } from '../ui/dialog.js';
import type { Feature, NavItem, Router } from './features.js';
import type { AppState } from './state.js';
import { chooseTheme, currentTheme } from './theme.js';

/** Light or dark, remembered; the label says what a press does. */
function ThemeToggle() {
  const [theme, setTheme] = useState(currentTheme);
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <Button
      variant="ghost"
      id="theme-toggle"
      aria-label={`Switch to ${next} theme`}
      onClick={() => {
        chooseTheme(next);
        setTheme(next);
      }}
    >
      <Icon icon={theme === 'dark' ? Sun : Moon} />
    </Button>
  );
}

/** The product's name, linking home. */
function Brand() {
  const { state } = useApp();
  return (
    <Link to={state.token ? 'account' : 'home'} class="flex items-center gap-2 text-base font-semibold text-fg no-underline hover:no-underline" id="brand">
      <span aria-hidden="true" class="inline-block size-6 rounded-md bg-primary" />
      {state.product?.name ?? 'SaaS'}
    </Link>
  );
}

/** The account menu (a disclosure): who is signed in, the settings, log-out. Escape closes it. */
function AccountMenu() {
  const { state, dispatch } = useApp();
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('click', outside);
    return () => document.removeEventListener('click', outside);
  }, [open]);
  const email = state.account?.email ?? '';
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape anywhere in the open menu closes it (the keys reach the focused button or link first)
    <div
      class="relative"
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          setOpen(false);
          box.current?.querySelector('button')?.focus();
        }
      }}
    >
      <Button variant="ghost" id="account-menu-button" aria-expanded={open} aria-controls="account-menu" onClick={() => setOpen(!open)}>
        <span aria-hidden="true" class="grid size-7 place-items-center rounded-full bg-primary-soft text-xs font-semibold uppercase">
          {email.slice(0, 1)}
        </span>
        <span class="sr-only">Account menu</span>
      </Button>
      {/* biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: following a link inside closes the menu; the link itself is the keyboard's target (Enter clicks it) */}
      <div
        id="account-menu"
        hidden={!open}
        class="absolute right-0 z-40 mt-2 w-64 rounded-xl border border-line bg-surface p-2 shadow-lg"
        onClick={(e) => {
          if ((e.target as HTMLElement).closest('a')) setOpen(false);
        }}
      >
        <p class="truncate px-3 py-2 text-sm text-muted" title={email}>
          {email}
        </p>
        <ul class="space-y-1 text-sm">
          <li>
            <Link to="settings" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              Profile
            </Link>
          </li>
          <li>
            <Link to="security" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              Security
            </Link>
          </li>
          <li>
            <Link to="sessions" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              Sessions
            </Link>
          </li>
          <li>
            <button
              id="log-out"
              type="button"
              disabled={state.busy}
              onClick={() => dispatch(['log-out'])}
              class="flex w-full items-center gap-2 rounded-lg px-3 py-2 text-left text-fg hover:bg-raised"
            >
              <Icon icon={LogOut} size={16} /> Log out
            </button>
          </li>
        </ul>
      </div>
    </div>
  );
}

const SECTIONS: Array<{ id: NavItem['section']; label: string }> = [
  { id: 'main', label: 'Home' },
  { id: 'org', label: 'Organization' },
  { id: 'settings', label: 'Account' },
  { id: 'admin', label: 'Platform' },
];

/** The side navigation: the features' links by section, each shown when its path exists for the state. */
function SideNav({ features, onNavigate }: { features: readonly Feature[]; onNavigate: () => void }) {
  const { state, dispatch } = useApp();
  const items = features.flatMap((f) => f.nav ?? []).sort((a, b) => a.order - b.order);
  const current = typeof location === 'undefined' ? '' : location.pathname;
  return (
    <nav id="side-nav" aria-label="Main" class="space-y-6 text-sm">
      {SECTIONS.map((section) => {
        const links = items
          .filter((i) => i.section === section.id)
          .map((i) => ({ item: i, path: i.path ? i.path(state) : undefined }))
          .filter((l) => !l.item.path || l.path);
        if (links.length === 0) return null;
        return (
          <div key={section.id}>
            <h2 class="mb-2 px-3 text-xs font-semibold uppercase tracking-wide text-muted">{section.label}</h2>
            <ul class="space-y-1">
              {links.map(({ item, path }) => {
                const active = state.route === item.route && (!path || current === path);
                return (
                  <li key={item.route}>
                    <NavLink item={item} path={path} active={active} onNavigate={onNavigate} dispatch={dispatch} />
                  </li>
                );
              })}
            </ul>
          </div>
        );
      })}
    </nav>
  );
}

function NavLink({
  item,
  path,
  active,
  onNavigate,
  dispatch,
}: {
  item: NavItem;
  path?: string;
  active: boolean;
  onNavigate: () => void;
  dispatch: (e: [string, ...unknown[]]) => void;
}) {
  const { router } = useApp();
  return (
    <a
      id={item.id}
      href={path ?? router.pathOf(item.route)}
      aria-current={active ? 'page' : undefined}
      class={`flex items-center gap-3 rounded-lg px-3 py-2 no-underline hover:bg-raised hover:no-underline ${active ? 'bg-primary-soft font-semibold text-fg' : 'text-fg'}`}
      onClick={(e) => {
        if (!plainClick(e)) return;
        e.preventDefault();
        onNavigate();
        dispatch(['router/navigate', { route: item.route, path }]);
      }}
    >
      {item.icon && <Icon icon={item.icon} />}
      {item.label}
    </a>
  );
}

/** The features' banners (an impersonation's), above every page of a session. */
function Banners({ features }: { features: readonly Feature[] }) {
  return <>{features.map((f) => f.banner && <f.banner key={f.id} />)}</>;
}

/** Shown on every signed-in page while the account's address is unverified. */
function VerifyBanner() {
  const { state, dispatch } = useApp();
  if (state.account?.['email-verified'] !== false) return null;
  return (
    <div id="verify-banner" class="mb-6">
      <Alert tone="warning">
        Please verify your email address: we sent a link to {state.account.email}.{' '}
        <Button id="resend-verification" variant="link" disabled={state.busy} onClick={() => dispatch(['verification/resend'])}>
          Resend
        </Button>
      </Alert>
    </div>
  );
}

/** The signed-in shell. */
function AppShell({ features, children }: { features: readonly Feature[]; children: ComponentChildren }) {
  const [menu, setMenu] = useState(false);
  return (
    <div class="min-h-screen">
      <a href="#main" class="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-surface focus:p-2">
        Skip to content
      </a>
      <Banners features={features} />
      <header class="sticky top-0 z-30 border-b border-line bg-surface">
        <div class="flex flex-wrap items-center gap-2 px-3 py-2 sm:px-4">
          <Button variant="ghost" id="menu-button" class="md:hidden" aria-expanded={menu} aria-controls="side-nav-panel" onClick={() => setMenu(!menu)}>
            <Icon icon={menu ? X : Menu} />
            <span class="sr-only">Menu</span>
          </Button>
          <Brand />
          <div class="order-last flex w-full min-w-0 gap-2 md:order-none md:ml-4 md:w-auto">{features.map((f) => f.header && <f.header key={f.id} />)}</div>
          <div class="ml-auto flex items-center gap-1">
            <ThemeToggle />
            <AccountMenu />
          </div>
        </div>
      </header>
      <div class="mx-auto flex max-w-7xl flex-col md:flex-row">
        <div
          id="side-nav-panel"
          class={`${menu ? 'block' : 'hidden'} border-b border-line bg-surface p-4 md:sticky md:top-14 md:block md:h-[calc(100vh-3.5rem)] md:w-60 md:shrink-0 md:overflow-y-auto md:border-b-0 md:border-r`}
        >
          <SideNav features={features} onNavigate={() => setMenu(false)} />
        </div>
        <main id="main" class="min-w-0 flex-1 px-4 py-6 sm:px-8 sm:py-8">
          <div class="mx-auto max-w-4xl">
            <VerifyBanner />
            {children}
          </div>
        </main>
      </div>
    </div>
  );
}

/** The public pages' shell: the product, pricing, log-in and sign-up (or the dashboard, signed in). */
function PublicShell({ features, children }: { features: readonly Feature[]; children: ComponentChildren }) {
  const { state } = useApp();
  return (
    <div class="flex min-h-screen flex-col">
      <a href="#main" class="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-surface focus:p-2">
        Skip to content
      </a>
      {state.token && <Banners features={features} />}
      <header class="border-b border-line bg-surface">
        <div class="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3">
          <Brand />
          <nav aria-label="Site" class="ml-auto flex flex-wrap items-center gap-1 text-sm">
            <Link to="pricing" id="nav-pricing" class="rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              Pricing
            </Link>
            {state.token ? (
              <ButtonLink to="account" id="nav-dashboard">
                Dashboard
              </ButtonLink>
            ) : (
              <>
                <Link to="log-in" id="nav-log-in" class="rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
                  Log in
                </Link>
                <ButtonLink to="sign-up" id="nav-sign-up">
                  Sign up
                </ButtonLink>
              </>
            )}
            <ThemeToggle />
          </nav>
        </div>
      </header>
      <main id="main" class="flex-1 px-4 py-8 sm:py-12">
        {children}
      </main>
      <footer class="border-t border-line px-4 py-6 text-center text-sm text-muted">
        {state.product?.name ?? 'SaaS'} · <Link to="pricing">Pricing</Link> · <a href="/openapi">API</a>
      </footer>
    </div>
  );
}

/**
 * Re-authentication before a sensitive change (the server answered `reauthentication-required`):
 * the password, then the change is sent again; an account without a password signs in again.
 */
function ReauthDialog() {
  const { state, dispatch } = useApp();
  const reauth = state.reauth;
  if (!reauth) return null;
  if (reauth.method === 'recent-sign-in') {
    return (
      <FormDialog
        id="reauth-dialog"
        title="Sign in again to continue"
        submitLabel="Sign in again"
        message="This change needs a sign-in within the last 10 minutes. Sign in again, then make the change."
        onSubmit={() => dispatch(['reauth/sign-in-again'])}
        onCancel={() => dispatch(['reauth/cancel'])}
      />
    );
  }
  return (
    <FormDialog
      id="reauth-dialog"
      title="Confirm with your password"
      submitLabel="Confirm"
      message="This change needs your password, so that no one else using this session can make it."
      onSubmit={(fields) => dispatch(['reauth/submit', fields['reauth-password'] ?? ''])}
      onCancel={() => dispatch(['reauth/cancel'])}
    >
      <label class="block text-sm font-medium" for="reauth-password">
        Password
        <input
          id="reauth-password"
          name="reauth-password"
          type="password"
          required
          autoComplete="current-password"
          class="mt-1 block w-full rounded-lg border border-line bg-surface px-3 py-2 text-sm"
        />
      </label>
    </FormDialog>
  );
}

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
    document.title = def ? `${def.title} · ${state.product?.name ?? 'SaaS'}` : (state.product?.name ?? 'SaaS');
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
        Loading…
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
