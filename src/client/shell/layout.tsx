/**
 * The shells around the pages. Signed in: a header (product, the features' header parts such as
 * the organization switcher, their tools such as the notifications bell, theme, account menu), a side navigation (a menu button opens it
 * below 768 px), the features' banners and the page. Public pages get a slim header and a footer.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Menu, X } from 'lucide';
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink } from '../ui/button.js';
import { Alert } from '../ui/feedback.js';
import { Icon } from '../ui/icon.js';
import type { Feature } from './features.js';
import { AccountMenu, Brand, ThemeToggle } from './header.js';
import { SideNav } from './nav.js';
import { t } from '../i18n/words.js';

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
        {t('Please verify your email address: we sent a link to {email}.', { email: state.account.email })}{' '}
        <Button id="resend-verification" variant="link" disabled={state.busy} onClick={() => dispatch(['verification/resend'])}>
          {t('Resend')}
        </Button>
      </Alert>
    </div>
  );
}

/** The signed-in shell. */
export function AppShell({ features, children }: { features: readonly Feature[]; children: ComponentChildren }) {
  const [menu, setMenu] = useState(false);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape anywhere closes the open menu and gives the focus back to its button (the keys reach the focused element first)
    <div
      class="min-h-screen"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && menu) {
          setMenu(false);
          document.getElementById('menu-button')?.focus();
        }
      }}
    >
      <a href="#main" class="sr-only focus:not-sr-only focus:absolute focus:start-2 focus:top-2 focus:z-50 focus:rounded focus:bg-surface focus:p-2">
        {t('Skip to content')}
      </a>
      <Banners features={features} />
      <header class="sticky top-0 z-30 border-b border-line bg-surface">
        <div class="flex flex-wrap items-center gap-2 px-3 py-2 sm:px-4">
          <Button variant="ghost" id="menu-button" class="md:hidden" aria-expanded={menu} aria-controls="side-nav-panel" onClick={() => setMenu(!menu)}>
            <Icon icon={menu ? X : Menu} />
            <span class="sr-only">{t('Menu')}</span>
          </Button>
          <Brand />
          <div class="order-last flex w-full min-w-0 gap-2 md:order-none md:ms-4 md:w-auto">{features.map((f) => f.header && <f.header key={f.id} />)}</div>
          <div class="ms-auto flex items-center gap-1">
            {features.map((f) => f.headerTools && <f.headerTools key={f.id} />)}
            <ThemeToggle />
            <AccountMenu />
          </div>
        </div>
      </header>
      <div class="mx-auto flex max-w-7xl flex-col md:flex-row">
        <div
          id="side-nav-panel"
          class={`${menu ? 'block' : 'hidden'} border-b border-line bg-surface p-4 md:sticky md:top-14 md:block md:h-[calc(100vh-3.5rem)] md:w-60 md:shrink-0 md:overflow-y-auto md:border-b-0 md:border-e`}
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
export function PublicShell({ features, children }: { features: readonly Feature[]; children: ComponentChildren }) {
  const { state } = useApp();
  return (
    <div class="flex min-h-screen flex-col">
      <a href="#main" class="sr-only focus:not-sr-only focus:absolute focus:start-2 focus:top-2 focus:z-50 focus:rounded focus:bg-surface focus:p-2">
        {t('Skip to content')}
      </a>
      {state.token && <Banners features={features} />}
      <header class="border-b border-line bg-surface">
        <div class="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3">
          <Brand />
          <nav aria-label={t('Site')} class="ms-auto flex flex-wrap items-center gap-1 text-sm">
            <Link to="pricing" id="nav-pricing" class="rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              {t('Pricing')}
            </Link>
            {state.token ? (
              <ButtonLink to="account" id="nav-dashboard">
                {t('Dashboard')}
              </ButtonLink>
            ) : (
              <>
                <Link to="log-in" id="nav-log-in" class="rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
                  {t('Log in')}
                </Link>
                <ButtonLink to="sign-up" id="nav-sign-up">
                  {t('Sign up')}
                </ButtonLink>
              </>
            )}
            {features.map((f) => f.publicTools && <f.publicTools key={f.id} />)}
            <ThemeToggle />
          </nav>
        </div>
      </header>
      <main id="main" class="flex-1 px-4 py-8 sm:py-12">
        {children}
      </main>
      <footer class="border-t border-line px-4 py-6 text-center text-sm text-muted">
        {state.product?.name ?? 'SaaS'} · <Link to="pricing">{t('Pricing')}</Link> · <a href="/openapi">{t('API')}</a>
      </footer>
    </div>
  );
}
