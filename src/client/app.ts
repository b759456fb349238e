/**
 * The app shell: routes, state, and the auth events (sign-up, log-in, the account page, log-out,
 * toasts, navigation), on the event core and the request layer. The account lifecycle's events
 * live in account/events.ts; the views (Preact) in view.tsx and account/pages.tsx.
 */
import type { AccountPagesState } from './account/events.js';
import type { AdminRoute, AdminState } from './admin/events.js';
import type { AuditState } from './audit/events.js';
import type { BillingState } from './billing/events.js';
import type { SecurityState } from './account/security-events.js';
import type { ApiKeysState } from './api-keys/events.js';
import type { OidcState } from './oidc/events.js';
import type { OrgsState } from './orgs/events.js';
import { EventCore, type EventVector } from './core.js';
import { installHttp, type HttpFailure, type HttpLayerConfig } from './http.js';

export type Route =
  | 'log-in' | 'sign-up' | 'account'
  | 'forgot-password' | 'reset-password' | 'verify-email' | 'confirm-email'
  | 'settings' | 'sessions' | 'delete-account'
  | 'orgs' | 'org' | 'org-audit' | 'org-api-keys' | 'accept-invitation'
  | 'billing'
  | AdminRoute;

export interface Account {
  id: string;
  email: string;
  name: string | null;
  'created-at': string;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null };
  /** absent from servers that predate the account lifecycle */
  'email-verified'?: boolean;
  /** log-in asks for a TOTP code; absent from servers without two-factor */
  'two-factor-enabled'?: boolean;
  /** the admin pages are open to it (docs/admin.md) */
  'platform-admin'?: boolean;
  /** in an impersonated session: the platform admin acting as the account */
  'impersonated-by'?: { id: string; email: string };
}

export interface AppState extends AccountPagesState, OrgsState, AuditState, BillingState, SecurityState, ApiKeysState, OidcState, AdminState {
  route: Route;
  token?: string;
  account?: Account;
  toasts: Array<{ id: number; message: string; kind?: 'error' | 'info' }>;
  busy: boolean;
  /** false until the start-up session check answered */
  ready: boolean;
}

export const PATHS: Record<Route, string> = {
  'log-in': '/log-in',
  'sign-up': '/sign-up',
  account: '/account',
  'forgot-password': '/forgot-password',
  'reset-password': '/reset-password',
  'verify-email': '/verify-email',
  'confirm-email': '/confirm-email',
  settings: '/settings',
  sessions: '/settings/sessions',
  'delete-account': '/settings/delete',
  orgs: '/orgs',
  /** `/orgs/<id>`: navigate with `{route: 'org', path}` */
  org: '/orgs',
  /** `/orgs/<id>/audit-log`: navigate with `{route: 'org-audit', path}` */
  'org-audit': '/orgs',
  /** `/orgs/<id>/api-keys`: navigate with `{route: 'org-api-keys', path}` */
  'org-api-keys': '/orgs',
  'accept-invitation': '/invitations/accept',
  /** `/billing?org=<id>`: navigate with `{route: 'billing', path}` */
  billing: '/billing',
  admin: '/admin',
  /** `/admin/accounts/<id>`: navigate with `{route: 'admin-account', path}` */
  'admin-account': '/admin/accounts',
  'admin-orgs': '/admin/orgs',
  'admin-stats': '/admin/stats',
  'admin-audit': '/admin/audit-log',
};

/** Pages only a signed-in user sees; a visitor without a session is sent to log in. */
export const SIGNED_IN_ROUTES: ReadonlySet<Route> = new Set<Route>([
  'account', 'settings', 'sessions', 'delete-account', 'orgs', 'org', 'org-audit', 'org-api-keys', 'billing',
  'admin', 'admin-account', 'admin-orgs', 'admin-stats', 'admin-audit',
]);

/** Pages a signed-in user has no business on: a log-in from there goes to the account page. */
const ENTRY_ROUTES: ReadonlySet<Route> = new Set<Route>(['log-in', 'sign-up']);

/** The route of a location's path (no query); a trailing slash is ignored; unknown paths: the account. */
export function routeOf(path: string): Route {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (/^\/orgs\/[^/]+$/.test(clean)) return 'org';
  if (/^\/orgs\/[^/]+\/audit-log$/.test(clean)) return 'org-audit';
  if (/^\/orgs\/[^/]+\/api-keys$/.test(clean)) return 'org-api-keys';
  if (/^\/admin\/accounts\/[^/]+$/.test(clean)) return 'admin-account';
  const found = (Object.entries(PATHS) as Array<[Route, string]>).find(([, p]) => p === clean);
  return found ? found[0] : 'account';
}

interface LogInResponse {
  'access-token': string;
  account: Account;
}

/**
 * The server sets this readable cookie with the HttpOnly refresh-token cookie and clears the
 * two together: without it a refresh cannot succeed, so a first visit does not ask.
 */
export const SESSION_HINT_COOKIE = 'has-session';

/** true when `document.cookie` (given) carries the session hint */
export function hasSessionHint(cookies: string): boolean {
  return cookies.split(';').some((c) => c.trim() === `${SESSION_HINT_COOKIE}=1`);
}

let toastIds = 0;

/** Registers the app's events on a core; `navigate` changes the browser's location. */
export function registerApp(core: EventCore<AppState>, http: Omit<HttpLayerConfig, 'getToken' | 'setToken'>, navigate: (path: string) => void): void {
  installHttp(core, {
    ...http,
    loginRoute: 'log-in',
    getToken: () => core.state.token,
    // synchronous, so a request retried after a refresh sees the new token at once
    setToken: (token) => core.dispatchSync(['auth/token', token]),
  });
  core.regFx('navigate', (path: string) => navigate(path));
  core.regFx('later', ({ ms, event }: { ms: number; event: EventVector }) => { setTimeout(() => core.dispatch(event), ms); });

  core
    .regEvent('app/start', ({ state }, [, arg]) => {
      // a page load has no access token: the refresh-token cookie may restore the session,
      // if there is one (a first visit has none, and asks nothing)
      if (!(arg as { sessionHint?: boolean } | undefined)?.sessionHint) return { dispatch: ['auth/no-session'] };
      return {
        db: { ...state, busy: true },
        'http/api': { url: 'account/refresh', method: 'post', body: {}, onSuccess: ['auth/logged-in', { quiet: true }], onFailure: ['auth/no-session'] },
      };
    })
    .regEvent('auth/no-session', ({ state }) => ({
      db: { ...state, busy: false, ready: true },
      dispatch: state.route === 'account' ? ['router/navigate', { route: 'log-in' }] : undefined,
    }))
    .regEvent('auth/token', ({ state }, [, token]) => ({ db: { ...state, token: token as string | undefined } }))
    .regEvent('auth/logged-in', ({ state }, [, _opts, response]) => {
      const r = response as LogInResponse;
      return {
        db: { ...state, token: r['access-token'], account: r.account, busy: false, ready: true },
        // a session restored on a link page (verify-email, settings, ...) stays there
        dispatch: ENTRY_ROUTES.has(state.route) ? ['router/navigate', { route: 'account' }] : undefined,
      };
    })
    .regEvent('log-in/submit', ({ state }, [, form]) => ({
      db: { ...state, busy: true },
      // answered with tokens, or with `mfa-required` (account/security-events.ts)
      'http/api': { url: 'account/log-in', method: 'post', body: form, onSuccess: ['log-in/answered'], onFailureN: [['request/failed'], ['app/idle']] },
    }))
    .regEvent('sign-up/submit', ({ state }, [, form]) => {
      const f = form as { email: string; password: string; 'confirm-password': string; name?: string };
      return {
        db: { ...state, busy: true },
        'http/api': {
          url: 'account/sign-up', method: 'post', body: f,
          onSuccess: ['log-in/submit', { email: f.email, password: f.password }],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('account/load', () => ({
      'http/auth-api': { url: 'account/me', onSuccess: ['account/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('account/loaded', ({ state }, [, account]) => ({ db: { ...state, account: account as Account } }))
    .regEvent('log-out', ({ state }) => ({
      db: { ...state, busy: true },
      'http/api': { url: 'account/log-out', method: 'post', body: {}, onSuccess: ['auth/logged-out'], onFailureN: [['auth/logged-out']] },
    }))
    .regEvent('auth/logged-out', ({ state }) => ({
      db: { ...state, token: undefined, account: undefined, busy: false, passkeys: undefined, backupCodes: undefined, twoFactorSetup: undefined },
      dispatch: ['router/navigate', { route: 'log-in' }],
    }))
    .regEvent('app/idle', ({ state }) => ({ db: { ...state, busy: false } }))
    .regEvent('router/navigate', ({ state }, [, arg]) => {
      // `path` for a route with a parameter (`/orgs/<id>`)
      const { route, path } = arg as { route: Route; path?: string };
      return { db: { ...state, route, busy: false }, navigate: path ?? PATHS[route] };
    })
    .regEvent('router/changed', ({ state }, [, path]) => ({ db: { ...state, route: routeOf(path as string) } }))
    .regEvent('request/failed', (_ctx, [, failure]) => {
      const f = failure as Partial<HttpFailure> & { type?: string; errors?: Array<{ path: string; message: string }> };
      const detail = f.errors?.length ? `: ${f.errors.map((e) => `${e.path.replace(/^\//, '')} ${e.message}`).join(', ')}` : '';
      return { dispatch: ['toast/error', { message: `${f.message ?? 'Request failed'}${detail}` }] };
    })
    .regEvent('toast/error', ({ state }, [, arg]) => addToast(state, (arg as { message: string }).message, 'error'))
    .regEvent('toast/info', ({ state }, [, arg]) => addToast(state, (arg as { message: string }).message, 'info'))
    .regEvent('toast/dismiss', ({ state }, [, id]) => ({ db: { ...state, toasts: state.toasts.filter((t) => t.id !== id) } }));
}

function addToast(state: AppState, message: string, kind: 'error' | 'info') {
  const id = ++toastIds;
  return { db: { ...state, toasts: [...state.toasts, { id, message, kind }] }, later: { ms: 6000, event: ['toast/dismiss', id] } };
}
