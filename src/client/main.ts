/** Browser entry: one core, the shell's and the features' events on it, the browser's effects, the Preact root, history routing. */
import { h, render } from 'preact';
import { FEATURES, registerApp, registerFeatures, router, SHELL } from './app.js';
import { EventCore } from './core.js';
import { hasSessionHint } from './shell/events.js';
import type { BrowserIo } from './shell/features.js';
import { PRODUCT_NAME_FIELD, PRODUCT_PITCH_FIELD, type AppState } from './shell/state.js';
import { applyStoredTheme } from './shell/theme.js';
import { Root } from './shell/view.js';
import './style.css';
import { isLocale, LOCALE_COOKIE, lookupLocale, PAGE_LOCALE_FIELD, textDirection } from '../shared/locales.js';
import { loadLocale } from './i18n/load.js';

applyStoredTheme();
// the words of the page's language before the first render (the server negotiated it: the
// cookie, Accept-Language, its default)
const pageLocale = (document.getElementById(PAGE_LOCALE_FIELD) as HTMLInputElement | null)?.value;
const locale = isLocale(pageLocale) ? pageLocale : (lookupLocale(navigator.languages) ?? 'en');
await loadLocale(locale, textDirection(locale));
const root = document.getElementById('app')!;
const field = (id: string) => (document.getElementById(id) as HTMLInputElement | null)?.value;
const core = new EventCore<AppState>({
  route: router.routeOf(location.pathname),
  toasts: [],
  busy: false,
  ready: false,
  locale,
  // the server writes the product's name and pitch into the page (PRODUCT_NAME, PRODUCT_PITCH)
  product: { name: field(PRODUCT_NAME_FIELD) || 'SaaS', pitch: field(PRODUCT_PITCH_FIELD) ?? '' },
});

const io: BrowserIo = {
  navigate: (path) => {
    if (location.pathname + location.search !== path) history.pushState(null, '', path);
  },
  replaceUrl: (path) => history.replaceState(history.state, '', path),
  assign: (url) => location.assign(url),
  download: ({ filename, type, text }) => {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = Object.assign(document.createElement('a'), { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    // the download has started once click() returns; a moment later the URL can go
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  },
  // storage that is switched off (a privacy mode) keeps nothing: the app works without it
  storage: {
    getItem: (key) => {
      try {
        return localStorage.getItem(key);
      } catch {
        return null;
      }
    },
    setItem: (key, value) => {
      try {
        localStorage.setItem(key, value);
      } catch {
        /* not kept */
      }
    },
    removeItem: (key) => {
      try {
        localStorage.removeItem(key);
      } catch {
        /* not kept */
      }
    },
  },
  copy: (text) => navigator.clipboard.writeText(text),
  loadLocale: (l) => loadLocale(l, textDirection(l)),
  browserLocale: () => lookupLocale(navigator.languages) ?? 'en',
  rememberLocale: (l) => {
    const secure = location.protocol === 'https:' ? '; secure' : '';
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser the app supports
    document.cookie = l
      ? `${LOCALE_COOKIE}=${l}; path=/; max-age=31536000; samesite=lax${secure}`
      : `${LOCALE_COOKIE}=; path=/; max-age=0; samesite=lax${secure}`;
  },
  pageField: field,
  // the WebAuthn library is fetched the first time a passkey is used (most page loads use none)
  webauthn: {
    register: async (options) => {
      const { startRegistration } = await import('@simplewebauthn/browser');
      return startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] });
    },
    authenticate: async (options) => {
      const { startAuthentication } = await import('@simplewebauthn/browser');
      return startAuthentication({ optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'] });
    },
  },
};

registerApp(core, {}, io.navigate);
registerFeatures(core, io);
window.addEventListener('popstate', () => core.dispatch(['router/changed', location.pathname]));
render(h(Root, { core, router, features: FEATURES, logIn: SHELL.logIn }), root);
core.dispatch(['app/start', { sessionHint: hasSessionHint(document.cookie) }]);
