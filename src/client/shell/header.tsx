/**
 * The header's own parts: the product's name (home), the theme toggle, and the signed-in
 * account menu. Both shells (layout.tsx) use them; features add theirs (the organization
 * switcher, the notifications bell) through `header` and `headerTools` (features.ts).
 */
import { useState } from 'preact/hooks';
import { LogOut, Moon, Sun } from 'lucide';
import { Link, useApp } from '../ui/app.js';
import { Avatar } from '../ui/avatar.js';
import { Button } from '../ui/button.js';
import { useDisclosure } from '../ui/disclosure.js';
import { Icon } from '../ui/icon.js';
import { chooseTheme, currentTheme } from './theme.js';
import { t } from '../i18n/words.js';

/** Light or dark, remembered; the label says what a press does. */
export function ThemeToggle() {
  const [theme, setTheme] = useState(currentTheme);
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <Button
      variant="ghost"
      id="theme-toggle"
      aria-label={next === 'dark' ? t('Switch to dark theme') : t('Switch to light theme')}
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
export function Brand() {
  const { state } = useApp();
  return (
    <Link to={state.token ? 'account' : 'home'} class="flex items-center gap-2 text-base font-semibold text-fg no-underline hover:no-underline" id="brand">
      <span aria-hidden="true" class="inline-block size-6 rounded-md bg-primary" />
      {state.product?.name ?? 'SaaS'}
    </Link>
  );
}

/** The account menu (a disclosure, its button the account's picture or initials): who is signed in, the settings, log-out. Escape closes it. */
export function AccountMenu() {
  const { state, dispatch } = useApp();
  const { open, setOpen, box, onKeyDown, onPanelClick } = useDisclosure();
  const email = state.account?.email ?? '';
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape anywhere in the open menu closes it (the keys reach the focused button or link first)
    <div class="relative" ref={box} onKeyDown={onKeyDown}>
      <Button variant="ghost" id="account-menu-button" aria-expanded={open} aria-controls="account-menu" onClick={() => setOpen(!open)}>
        <Avatar image={state.account?.avatar} name={state.account?.name || email || '?'} />
        <span class="sr-only">{t('Account menu')}</span>
      </Button>
      {/* biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: following a link inside closes the menu; the link itself is the keyboard's target (Enter clicks it) */}
      <div id="account-menu" hidden={!open} class="absolute end-0 z-40 mt-2 w-64 rounded-xl border border-line bg-surface p-2 shadow-lg" onClick={onPanelClick}>
        <p class="truncate px-3 py-2 text-sm text-muted" title={email}>
          {email}
        </p>
        <ul class="space-y-1 text-sm">
          <li>
            <Link to="settings" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              {t('Profile')}
            </Link>
          </li>
          <li>
            <Link to="security" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              {t('Security')}
            </Link>
          </li>
          <li>
            <Link to="sessions" class="block rounded-lg px-3 py-2 text-fg no-underline hover:bg-raised">
              {t('Sessions')}
            </Link>
          </li>
          <li>
            <button
              id="log-out"
              type="button"
              disabled={state.busy}
              onClick={() => dispatch(['log-out'])}
              class="flex w-full items-center gap-2 rounded-lg px-3 py-2 text-start text-fg hover:bg-raised"
            >
              <Icon icon={LogOut} size={16} /> {t('Log out')}
            </button>
          </li>
        </ul>
      </div>
    </div>
  );
}
