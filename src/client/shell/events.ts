/**
 * The shell's events: start-up (the session restored by one refresh, when the session hint
 * says there is one), log-in, sign-up, log-out, the account, navigation and toasts, on the
 * event core and the request layer. Features add their own events (their `register`).
 */
import type { EventCore, EventVector } from '../core.js';
import { installHttp, type HttpFailure, type HttpLayerConfig, type HttpOptions } from '../http.js';
import type { Router } from './features.js';
import { errorsByField, type FailureBody, withFormErrors } from './form-errors.js';
import type { UploadSender } from '../upload.js';
import type { Account, AppState, Route } from './state.js';
import { registerUploads, unfinishedUploads } from './uploads.js';
import { t } from '../i18n/words.js';

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

export interface ShellOptions {
  router: Router;
  /** where a log-in lands, and where a signed-in visitor of an entry page goes */
  home: Route;
  /** where a visitor without a session is sent */
  logIn: Route;
  /** state fields a log-out forgets besides the session's own */
  forgetOnLogOut?: readonly string[];
  /** routes that show the log-in in place: a log-out there stays (signing in again to allow an app) */
  logInInPlace?: readonly Route[];
}

let toastIds = 0;

/** The request layer's settings the shell takes, and the uploads' sender (tests give their own). */
export type ShellHttp = Omit<HttpLayerConfig, 'getToken' | 'setToken'> & { uploadSender?: UploadSender };

/** Registers the shell's events on a core; `navigate` changes the browser's location. */
export function registerShell(core: EventCore<AppState>, http: ShellHttp, navigate: (path: string) => void, options: ShellOptions): void {
  const { router } = options;
  const entry = (route: Route) => router.def(route)?.access === 'entry';
  const { uploadSender, ...layer } = http;
  installHttp(core, {
    ...layer,
    loginRoute: options.logIn,
    reauthEvent: 'reauth/required',
    getToken: () => core.state.token,
    // synchronous, so a request retried after a refresh sees the new token at once
    setToken: (token) => core.dispatchSync(['auth/token', token]),
  });
  registerUploads(core, uploadSender);
  core.regFx('navigate', (path: string) => navigate(path));
  core.regFx('later', ({ ms, event }: { ms: number; event: EventVector }) => {
    setTimeout(() => core.dispatch(event), ms);
  });

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
      dispatch: state.route === options.home ? ['router/navigate', { route: options.logIn }] : undefined,
    }))
    .regEvent('auth/token', ({ state }, [, token]) => ({ db: { ...state, token: token as string | undefined } }))
    .regEvent('auth/logged-in', ({ state }, [, _opts, response]) => {
      const r = response as LogInResponse;
      return {
        db: { ...state, token: r['access-token'], account: r.account, busy: false, ready: true },
        // a session restored on a link page (verify-email, settings, ...) stays there
        dispatch: entry(state.route) ? ['router/navigate', { route: options.home }] : undefined,
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
        db: { ...withFormErrors(state, 'sign-up', undefined), busy: true },
        'http/api': {
          url: 'account/sign-up',
          method: 'post',
          body: f,
          onSuccess: ['log-in/submit', { email: f.email, password: f.password }],
          onFailureN: [['sign-up/failed'], ['app/idle']],
        },
      };
    })
    // the server's field errors beside the fields (a taken email on its field), the message as a toast
    .regEvent('sign-up/failed', ({ state }, [, failure]) => {
      const f = failure as FailureBody & { field?: string };
      const fields = errorsByField(f.errors);
      if (f.field && f.message) fields[f.field] ??= f.message;
      return {
        db: withFormErrors(state, 'sign-up', Object.keys(fields).length > 0 ? fields : undefined),
        dispatch: ['request/failed', failure],
      };
    })
    .regEvent('account/load', () => ({
      'http/auth-api': { url: 'account/me', onSuccess: ['account/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('account/loaded', ({ state }, [, account]) => ({ db: { ...state, account: account as Account } }))
    // the access token is forgotten at once: the server ends the session before it answers, and a
    // stream or request it closes meanwhile must not try to refresh a session being logged out
    .regEvent('log-out', ({ state }) => ({
      db: { ...state, token: undefined, busy: true },
      'http/api': { url: 'account/log-out', method: 'post', body: {}, onSuccess: ['auth/logged-out'], onFailureN: [['auth/logged-out']] },
    }))
    .regEvent('auth/logged-out', ({ state }) => {
      const db: AppState = { ...state, token: undefined, account: undefined, busy: false };
      for (const key of options.forgetOnLogOut ?? []) (db as unknown as Record<string, unknown>)[key] = undefined;
      return { db, dispatch: options.logInInPlace?.includes(state.route) ? undefined : ['router/navigate', { route: options.logIn }] };
    })
    .regEvent('app/idle', ({ state }) => ({ db: { ...state, busy: false } }))
    // a sensitive change answered `reauthentication-required`: the dialog asks, then the request goes again
    .regEvent('reauth/required', ({ state }, [, request, refusal]) => {
      const r = refusal as { method?: string; errors?: Array<{ path: string }> };
      const field = r.errors?.[0]?.path.replace(/^\//, '') || 'password';
      return {
        db: {
          ...state,
          busy: false,
          reauth: { method: r.method === 'recent-sign-in' ? 'recent-sign-in' : 'password', field, request: request as HttpOptions, refusal },
        },
      };
    })
    .regEvent('reauth/submit', ({ state }, [, password]) => {
      if (!state.reauth) return;
      const { request, field } = state.reauth;
      return {
        db: { ...state, busy: true, reauth: undefined },
        'http/auth-api': { ...request, body: { ...(request.body as Record<string, unknown> | undefined), [field]: password } },
      };
    })
    .regEvent('reauth/cancel', ({ state }) => {
      if (!state.reauth) return;
      const { request, refusal } = state.reauth;
      const failures = [request.onFailure, ...(request.onFailureN ?? [])].filter((e): e is EventVector => Boolean(e));
      return { db: { ...state, busy: false, reauth: undefined }, dispatchN: failures.map((e) => [...e, refusal] as EventVector) };
    })
    // an account without a password proves itself by signing in again
    .regEvent('reauth/sign-in-again', ({ state }) => ({ db: { ...state, reauth: undefined }, dispatch: ['log-out'] }))
    .regEvent('router/navigate', ({ state }, [, arg]) => {
      // `path` for a route with a parameter (`/orgs/<id>`)
      const { route, path } = arg as { route: Route; path?: string };
      return { db: { ...state, route, busy: false, uploads: unfinishedUploads(state.uploads) }, navigate: path ?? router.pathOf(route) };
    })
    .regEvent('router/changed', ({ state }, [, path]) => ({
      db: { ...state, route: router.routeOf(path as string), uploads: unfinishedUploads(state.uploads) },
    }))
    .regEvent('request/failed', (_ctx, [, failure]) => {
      const f = failure as Partial<HttpFailure> & { type?: string; errors?: Array<{ path: string; message: string }> };
      // the request layer says what went wrong in English; the reader reads it in their language
      const said =
        f.kind === 'network'
          ? t('The server could not be reached: check the connection and try again.')
          : f.kind === 'timeout'
            ? t('The request took too long; try again.')
            : f.kind === 'aborted'
              ? t('The request was cancelled.')
              : (f.message ?? t('Request failed'));
      // the server's field reasons are in the reader's language already
      const fields = f.errors?.map((e) => `${e.path.replace(/^\//, '')} ${e.message}`).join(', ');
      return { dispatch: ['toast/error', { message: fields ? t('{message}: {fields}', { message: said, fields }) : said }] };
    })
    .regEvent('toast/error', ({ state }, [, arg]) => addToast(state, (arg as { message: string }).message, 'error'))
    .regEvent('toast/info', ({ state }, [, arg]) => addToast(state, (arg as { message: string }).message, 'info'))
    .regEvent('toast/dismiss', ({ state }, [, id]) => ({ db: { ...state, toasts: state.toasts.filter((t) => t.id !== id) } }));
}

function addToast(state: AppState, message: string, kind: 'error' | 'info') {
  const id = ++toastIds;
  return { db: { ...state, toasts: [...state.toasts, { id, message, kind }] }, later: { ms: 6000, event: ['toast/dismiss', id] } };
}
