/** Browser entry: one core, the app's and the account lifecycle's events, the Preact root, history routing. */
import { h, render } from 'preact';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { registerAccount } from './account/events.js';
import { registerAdmin } from './admin/events.js';
import { registerAudit } from './audit/events.js';
import { registerSecurity } from './account/security-events.js';
import { registerApiKeys } from './api-keys/events.js';
import { hasSessionHint, registerApp, routeOf, type AppState } from './app.js';
import { registerBilling } from './billing/events.js';
import { EventCore } from './core.js';
import { providersInPage, registerOidc } from './oidc/events.js';
import { registerOrgs } from './orgs/events.js';
import { Root } from './view.js';
import './style.css';

const root = document.getElementById('app')!;
const core = new EventCore<AppState>({ route: routeOf(location.pathname), toasts: [], busy: false, ready: false });

registerApp(core, {}, (path) => {
  if (location.pathname !== path) history.pushState(null, '', path);
});
registerAccount(core, {
  replaceUrl: (path) => history.replaceState(history.state, '', path),
  download: ({ filename, type, text }) => {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = Object.assign(document.createElement('a'), { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    // the download has started once click() returns; a moment later the URL can go
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  },
});
registerSecurity(core, {
  register: (options) => startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] }),
  authenticate: (options) => startAuthentication({ optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'] }),
});
registerOrgs(core, {
  // storage that is switched off (a privacy mode) keeps nothing: the app works without it
  storage: {
    getItem: (key) => { try { return localStorage.getItem(key); } catch { return null; } },
    setItem: (key, value) => { try { localStorage.setItem(key, value); } catch { /* not kept */ } },
    removeItem: (key) => { try { localStorage.removeItem(key); } catch { /* not kept */ } },
  },
});
registerAudit(core);
registerBilling(core, { assign: (url) => location.assign(url) });
registerApiKeys(core, { copy: (text) => navigator.clipboard.writeText(text) });
registerOidc(core, {
  assign: (url) => location.assign(url),
  replaceUrl: (path) => history.replaceState(history.state, '', path),
});
registerAdmin(core, { reloadAt: (path) => location.assign(path) });
core.dispatchSync(['orgs/init']);
// the server writes the sign-in providers into the page; without them (another server) they are asked for
const providers = providersInPage(document);
if (providers) core.dispatchSync(['providers/loaded', providers]);
window.addEventListener('popstate', () => core.dispatch(['router/changed', location.pathname]));
render(h(Root, { core }), root);
core.dispatch(['app/start', { sessionHint: hasSessionHint(document.cookie) }]);
