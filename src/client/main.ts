/** Browser entry: one core, the shell's and the features' events on it, the browser's effects, the Preact root, history routing. */
import { h, render } from 'preact';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { FEATURES, registerApp, registerFeatures, router, SHELL } from './app.js';
import { EventCore } from './core.js';
import { hasSessionHint } from './shell/events.js';
import type { BrowserIo } from './shell/features.js';
import { PRODUCT_NAME_FIELD, PRODUCT_PITCH_FIELD, type AppState } from './shell/state.js';
import { applyStoredTheme } from './shell/theme.js';
import { Root } from './shell/view.js';
import './style.css';

applyStoredTheme();
const root = document.getElementById('app')!;
const field = (id: string) => (document.getElementById(id) as HTMLInputElement | null)?.value;
const core = new EventCore<AppState>({
  route: router.routeOf(location.pathname),
  toasts: [],
  busy: false,
  ready: false,
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
  pageField: field,
  webauthn: {
    register: (options) => startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] }),
    authenticate: (options) => startAuthentication({ optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'] }),
  },
};

registerApp(core, {}, io.navigate);
registerFeatures(core, io);
window.addEventListener('popstate', () => core.dispatch(['router/changed', location.pathname]));
render(h(Root, { core, router, features: FEATURES, logIn: SHELL.logIn }), root);
core.dispatch(['app/start', { sessionHint: hasSessionHint(document.cookie) }]);
