/** The account API: every route of the `Account API` group, declared as data. */
import { finished } from 'node:stream/promises';
import type { FastifyReply } from 'fastify';
import { originOf } from '../audit/log.js';
import { localeSources } from '../http/error-language.js';
import { namedLocale } from '../i18n/negotiate.js';
import { IMPERSONATION_COOKIE, REFRESH_COOKIE } from '../auth/refresh-tokens.js';
import { ErrorBody, HttpError, unauthorized } from '../http/errors.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import { Type } from 'typebox';
import { CreateAccount, LogIn, LogInResponse, MfaRequired, RefreshRequest, SignUpResponse, UserAccount } from './schemas.js';
import type { AccountService, Session } from './service.js';
import { setDeviceCookie, signInClient } from './devices.js';

export { IMPERSONATION_COOKIE, REFRESH_COOKIE };
/**
 * Not a credential: tells the browser client that a refresh cookie may exist (it cannot read
 * the HttpOnly one), so a first visit makes no refresh request bound to fail. Set and cleared
 * together with the refresh cookie, with the same expiry.
 */
export const SESSION_HINT_COOKIE = 'has-session';
const COOKIE_PATH = '/api/account';

export interface AccountRouteOptions {
  secureCookies: boolean;
  /** what other modules keep of a signed-in browser, cleared with the session's own (LOG_OUT_COOKIES_KEY) */
  alsoClear?: readonly LogOutCookie[];
}

/**
 * A module's cookie that belongs to a signed-in browser (the OAuth provider's session), declared
 * under {@link LOG_OUT_COOKIES_KEY}: log-out clears it with the product's own. `name` takes the
 * `__Host-` prefix where cookies are Secure when `hostPrefix` says so; `signed` also clears its `.sig`.
 */
export interface LogOutCookie {
  name: string;
  path: string;
  hostPrefix?: boolean;
  signed?: boolean;
}
export const LOG_OUT_COOKIES_KEY = 'account/log-out-cookies';

/** Clears the cookies of a session that ended (log-out, account deletion). */
export function clearSessionCookies(reply: FastifyReply, options: AccountRouteOptions): void {
  const secure = options.secureCookies;
  reply.clearCookie(REFRESH_COOKIE, { path: COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure });
  reply.clearCookie(SESSION_HINT_COOKIE, { path: '/', sameSite: 'strict', secure });
  clearImpersonationCookie(reply, options);
  for (const cookie of options.alsoClear ?? []) {
    const name = cookie.hostPrefix && secure ? `__Host-${cookie.name}` : cookie.name;
    for (const each of cookie.signed ? [name, `${name}.sig`] : [name]) reply.clearCookie(each, { path: cookie.path, httpOnly: true, sameSite: 'lax', secure });
  }
}

/**
 * Sets the refresh cookie of an impersonated session in this browser (src/admin/, docs/admin.md):
 * while it is set, refresh and log-out use it, and the admin's own `refresh-token` stays as it is
 * for when the impersonation ends.
 */
export function setImpersonationCookie(reply: FastifyReply, session: Session, options: AccountRouteOptions): void {
  reply.setCookie(IMPERSONATION_COOKIE, session.body['refresh-token'], {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: options.secureCookies,
    expires: session.refreshExpiresAt,
  });
}

/** Clears it: the browser is back in the admin's own session. */
export function clearImpersonationCookie(reply: FastifyReply, options: AccountRouteOptions): void {
  reply.clearCookie(IMPERSONATION_COOKIE, { path: COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: options.secureCookies });
}

/** Group data shared by the account API's route groups (this file, lifecycle, sessions). */
export const ACCOUNT_GROUP: Readonly<Omit<RouteGroup, 'routes'>> = {
  prefix: '/api/account',
  tags: ['Account API'],
  auth: 'optional',
  // credentials and tokens are small: a large body here is an attack, not a user
  bodyLimit: 16 * 1024,
};

/** Sets the cookies of a session that started (log-in, refresh; a second factor, a passkey, a provider sign-in): the refresh token and the hint. */
export function setSessionCookies(reply: FastifyReply, session: Session, options: AccountRouteOptions): void {
  if (session.device) setDeviceCookie(reply, session.device, options.secureCookies);
  reply.setCookie(REFRESH_COOKIE, session.body['refresh-token'], {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: options.secureCookies,
    expires: session.refreshExpiresAt,
  });
  reply.setCookie(SESSION_HINT_COOKIE, '1', { path: '/', sameSite: 'strict', secure: options.secureCookies, expires: session.refreshExpiresAt });
}

export function accountRoutes(accounts: AccountService, options: AccountRouteOptions): RouteGroup {
  const setRefreshCookie = (reply: FastifyReply, session: Session) => setSessionCookies(reply, session, options);
  const refreshTokenOf = (body: { 'refresh-token'?: string } | undefined, cookies: Record<string, string | undefined>) =>
    body?.['refresh-token'] ?? cookies[IMPERSONATION_COOKIE] ?? cookies[REFRESH_COOKIE];

  return {
    ...ACCOUNT_GROUP,
    routes: [
      route({
        method: 'POST',
        path: '/sign-up',
        summary: 'Create an account',
        description: 'Creates an account. The email is stored lower-cased; 409 when it is taken. ' + 'Sign-ups are rate-limited per client address (429).',
        schemas: { body: ref(CreateAccount), response: { 201: ref(SignUpResponse), 409: ref(ErrorBody), 429: ref(ErrorBody) } },
        async handler({ parameters, request }) {
          // the language the browser names, if the product has it: the account's (its emails speak it)
          return { account: await accounts.signUp(parameters.body, originOf(request), namedLocale(localeSources(request)) ?? null) };
        },
      }),
      route({
        method: 'POST',
        path: '/log-in',
        summary: 'Log in',
        description:
          'Exchanges credentials for an access token and a refresh token (also set as the HttpOnly `refresh-token` cookie). ' +
          'Unknown email and wrong password get the same 401. Failed attempts are rate-limited per email + client address and per client address (429); ' +
          'successful ones do not count. An account with two-factor on gets `mfa-required` and an `mfa-token` instead of tokens ' +
          '(no cookie): the log-in ends at `POST /api/account/log-in/mfa`. The right password of a locked account: 403 `account-locked`.',
        schemas: {
          body: ref(LogIn),
          response: { 200: Type.Union([ref(LogInResponse), ref(MfaRequired)]), 401: ref(ErrorBody), 403: ref(ErrorBody), 429: ref(ErrorBody) },
        },
        async handler({ parameters, request, reply }) {
          // a refused log-in's audit entry is written once the answer is out (AccountService.logIn)
          const answered = finished(reply.raw).catch(() => undefined);
          const session = await accounts.logIn(parameters.body, signInClient(request), answered);
          if ('mfaRequired' in session) return session.mfaRequired;
          setRefreshCookie(reply, session);
          return session.body;
        },
      }),
      route({
        method: 'GET',
        path: '/me',
        scopes: ['account:read'],
        summary: 'The current account',
        tool: {
          name: 'get-account',
          title: 'Get my account',
          description: 'The account of the person who connected the assistant: id, email, name and settings.',
        },
        description: 'The account of the caller, identified by the access token (`Authorization: Bearer <token>`).',
        auth: 'required',
        schemas: { response: { 200: ref(UserAccount) } },
        async handler({ user }) {
          const account = user && (await accounts.get(user));
          if (!account) throw unauthorized('Account no longer exists');
          return account;
        },
      }),
      route({
        method: 'POST',
        path: '/refresh',
        summary: 'Refresh the access token',
        description:
          'Rotates the refresh token (from the body, else the `impersonation-token` cookie of an impersonated session, else the ' +
          '`refresh-token` cookie) and returns a new pair; a 401 clears the cookies it came from. ' +
          'A token presented again after rotation revokes its whole family, except within the reuse grace window. ' +
          '403 `account-locked` for a locked account (docs/admin.md).',
        schemas: { body: ref(RefreshRequest), response: { 200: ref(LogInResponse), 401: ref(ErrorBody), 403: ref(ErrorBody) } },
        async handler({ parameters, request, reply }) {
          // an impersonation's own cookie: its end leaves the admin's session cookies alone
          const impersonating = !parameters.body?.['refresh-token'] && request.cookies[IMPERSONATION_COOKIE] !== undefined;
          let session: Session;
          try {
            session = await accounts.refresh(refreshTokenOf(parameters.body, request.cookies), originOf(request));
          } catch (err) {
            // a refresh token that no longer works is gone for good: so are its cookies
            if (err instanceof HttpError && err.status === 401) {
              if (impersonating) clearImpersonationCookie(reply, options);
              else clearSessionCookies(reply, options);
            }
            throw err;
          }
          if (impersonating) setImpersonationCookie(reply, session, options);
          else setRefreshCookie(reply, session);
          return session.body;
        },
      }),
      route({
        method: 'POST',
        path: '/log-out',
        summary: 'Log out',
        description:
          "Revokes the family of the refresh token given (body, else the cookies: an impersonated session's and the browser's own) " +
          'and clears the cookies and the `has-session` hint. Always 204.',
        schemas: { body: ref(RefreshRequest), response: { 204: null } },
        async handler({ parameters, request, reply }) {
          const given = parameters.body?.['refresh-token'];
          for (const token of given ? [given] : [request.cookies[IMPERSONATION_COOKIE], request.cookies[REFRESH_COOKIE]]) {
            if (token) await accounts.logOut(token, originOf(request));
          }
          clearSessionCookies(reply, options);
          return undefined;
        },
      }),
    ],
  };
}
