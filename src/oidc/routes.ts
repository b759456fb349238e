/**
 * Sign-in with OpenID Connect / OAuth 2 providers, as data (docs/oidc.md):
 *
 *   GET  /api/auth/providers                   the configured providers, for the buttons
 *   GET  /api/auth/oauth/:provider/start       302 to the provider (state, PKCE S256, nonce in the flow cookie)
 *   GET  /api/auth/oauth/:provider/callback    the provider's answer: 302 into the app, signed in, or to
 *                                              the log-in page with `?error=<code>`
 *   POST /api/auth/oauth/:provider/link        (auth) `{url}` to link the provider to the signed-in account
 *
 * The start and the callback are browser navigations: they answer with redirects, never with a
 * token in a URL (the session travels in the refresh cookie, as a password log-in's does).
 */
import { phrase } from '../i18n/messages.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { FirstFactorRefusedError, type AccountService } from '../account/service.js';
import { TWO_FACTOR_PAGE } from '../account/first-factor.js';
import { AccountLockedError } from '../auth/refresh-tokens.js';
import { setSessionCookies, type AccountRouteOptions } from '../account/routes.js';
import { signInClient } from '../account/devices.js';
import { originOf } from '../audit/log.js';
import { ErrorBody, HttpError, notFound, requestCoercion, serviceUnavailable, unauthorized } from '../http/errors.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { callbackPath, FLOW_COOKIE, type FlowCookies, type FlowState } from './flow-cookie.js';
import { SignInRefused, type IdentityService } from './identities.js';
import { describeError, isUnavailable, ProviderRefusedError, ProviderUnavailableError, type ProviderClient, type ProviderClients } from './providers.js';
import { AuthProviders, AuthorizationUrl, CallbackQuery, LinkProvider, ProviderParam, StartQuery } from './schemas.js';

/** Where a sign-in lands when it names no other page. */
export const DEFAULT_RETURN_TO = '/account';
const LOG_IN_PAGE = '/log-in';
/** the client's page of a sign-in's second step (the mfa-token in its fragment) */
const RETURN_TO_MAX = 512;

/** The codes the callback puts in `?error=` (the client shows a message for each). */
export type CallbackErrorCode =
  | 'access-denied'
  | 'provider-error'
  | 'invalid-state'
  | 'sign-in-failed'
  | 'provider-unavailable'
  | 'email-not-verified'
  | 'email-in-use'
  | 'identity-in-use'
  | 'session-ended'
  | 'rate-limited'
  | 'server-error'
  | 'account-not-verified'
  | 'account-locked'
  | 'sso-required';

/**
 * `return-to` as a path of this app: it must start with one `/` (no `//host`, no `/\host`, which
 * browsers read as another host), carry no control characters, and resolve to APP_URL's origin.
 * Undefined when it is not such a path.
 */
export function safeReturnTo(raw: string, appUrl: string): string | undefined {
  if (raw.length > RETURN_TO_MAX || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw, appUrl);
  } catch {
    return undefined;
  }
  return url.origin === new URL(appUrl).origin ? `${url.pathname}${url.search}${url.hash}` : undefined;
}

/** Whether the request is a browser's navigation (it asks for HTML), not an API client's call. */
const wantsHtml = (request: FastifyRequest) => /\btext\/html\b/.test(String(request.headers.accept ?? ''));

function redirect(reply: FastifyReply, location: string): undefined {
  reply.code(302).header('location', location);
  return undefined;
}

export interface OidcRouteDeps {
  providers: ProviderClients;
  identities: IdentityService;
  accounts: AccountService;
  flows: FlowCookies;
  appUrl: string;
  cookies: AccountRouteOptions;
  log: Logger;
}

export function oidcRoutes(deps: OidcRouteDeps): RouteGroup {
  const { providers, identities, accounts, flows, appUrl, log } = deps;
  const error = ref(ErrorBody);
  const redirectUri = (id: string) => `${appUrl}${callbackPath(id)}`;
  const providerOf = (id: string): ProviderClient => {
    const provider = providers.get(id);
    if (!provider) throw notFound(phrase('No sign-in provider named {id}', { id }), { known: providers.list().map((p) => p.id) });
    return provider;
  };

  /** A new flow's secrets, and the provider's authorization URL that carries their public halves. */
  const begin = async (provider: ProviderClient, returnTo: string, link?: FlowState['link']) => {
    const flow: FlowState = {
      provider: provider.id,
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      returnTo,
      link,
    };
    return { flow, url: await provider.authorizationUrl(redirectUri(provider.id), flow) };
  };

  /**
   * The last step of a provider sign-in, a first factor: a session for the account (its audit
   * entry commits with it), the refresh and hint cookies, and the way into the app. An account
   * with two-factor on gets no session yet: the browser goes to the client's second-step page
   * with the mfa-token in the URL's fragment, which no server, proxy or log ever sees.
   */
  const completeSignIn = async (request: FastifyRequest, reply: FastifyReply, accountId: string, provider: string, returnTo: string) => {
    const session = await accounts.firstFactorPassed(accountId, 'provider', signInClient(request), { method: 'oidc', provider });
    if ('mfaRequired' in session) {
      return redirect(reply, `${appUrl}${TWO_FACTOR_PAGE}#mfa-token=${encodeURIComponent(session.mfaRequired['mfa-token'])}`);
    }
    setSessionCookies(reply, session, deps.cookies);
    return redirect(reply, `${appUrl}${returnTo}`);
  };

  /** What a failed callback tells the client: an error code, logged with the failure's facts (never a secret). */
  const refusal = (err: unknown, provider: string): CallbackErrorCode => {
    let code: CallbackErrorCode;
    if (err instanceof SignInRefused) code = err.code;
    else if (err instanceof AccountLockedError) code = 'account-locked';
    // an organization's enforced single sign-on (src/sso/) owns this address
    else if (err instanceof FirstFactorRefusedError) code = 'sso-required';
    else if (err instanceof client.AuthorizationResponseError) code = err.error === 'access_denied' ? 'access-denied' : 'provider-error';
    else if (isUnavailable(err)) code = 'provider-unavailable';
    else if (err instanceof HttpError || !(err instanceof Error)) code = 'server-error';
    else if (err instanceof client.ResponseBodyError || err instanceof client.ClientError || err instanceof ProviderRefusedError) code = 'sign-in-failed';
    else code = 'server-error';
    const facts = { provider, error: code, ...describeError(err) };
    if (code === 'server-error') log.error('oidc/callback-failed', `Sign-in with ${provider} failed`, facts);
    else log.info('oidc/callback-refused', `Sign-in with ${provider} refused: ${code}`, facts);
    return code;
  };

  return {
    prefix: '/api/auth',
    tags: ['Sign-in providers'],
    auth: 'optional',
    bodyLimit: 16 * 1024,
    routes: [
      route({
        method: 'GET',
        path: '/providers',
        summary: 'The sign-in providers',
        description: 'The providers configured with OIDC_PROVIDERS, for the client\'s "Continue with …" buttons.',
        schemas: { response: { 200: ref(AuthProviders) } },
        handler: () => ({ providers: providers.list() }),
      }),
      route({
        method: 'GET',
        path: '/oauth/:provider/start',
        summary: 'Start signing in with a provider',
        description:
          "A browser navigation: 302 to the provider's authorization page with `state`, a PKCE S256 challenge and a `nonce`, " +
          'whose secrets are kept in an encrypted, HttpOnly cookie (10 minutes) sent only to the callback. `return-to`: a path of this app ' +
          'to land on afterwards (default `/account`; anything else is 400). 404 for an unknown provider. When the provider cannot be reached: ' +
          '503 `service-unavailable`, or for a browser (Accept: text/html) a 302 to the log-in page with `?error=provider-unavailable`.',
        schemas: { params: ProviderParam, querystring: StartQuery, response: { 302: null, 404: error, 503: error } },
        async handler({ parameters, request, reply }) {
          const provider = providerOf(parameters.path.provider);
          const raw = parameters.query['return-to'];
          const returnTo = raw === undefined || raw === '' ? DEFAULT_RETURN_TO : safeReturnTo(raw, appUrl);
          if (!returnTo) throw requestCoercion('query', [{ path: '/return-to', message: 'must be a path of this app, such as /account' }]);
          try {
            const { flow, url } = await begin(provider, returnTo);
            await flows.set(reply, flow);
            return redirect(reply, url.href);
          } catch (err) {
            if (!(err instanceof ProviderUnavailableError)) throw err;
            if (wantsHtml(request)) return redirect(reply, `${appUrl}${LOG_IN_PAGE}?error=provider-unavailable&provider=${provider.id}`);
            reply.header('retry-after', '30');
            throw serviceUnavailable(phrase('The sign-in provider {provider} cannot be reached; try again shortly', { provider: provider.id }));
          }
        },
      }),
      route({
        method: 'GET',
        path: '/oauth/:provider/callback',
        summary: "The provider's answer to a sign-in",
        description:
          'Where the provider sends the browser back (the redirect URI `APP_URL/api/auth/oauth/<provider>/callback`). ' +
          'Checks the flow cookie and `state`, exchanges the code with the PKCE verifier, checks the ID token (signature, issuer, audience, ' +
          "expiry, nonce), then signs in the account of the identity, links a verified email's verified account, or makes an account; " +
          'sets the refresh cookie and answers 302 to `APP_URL/account` (or the `return-to` of the start). A link (started with ' +
          '`POST /api/auth/oauth/<provider>/link`) lands on `/account?linked=<provider>`. Every failure is a 302 to the log-in page ' +
          "(a link's: to `/account`) with `?error=<code>&provider=<provider>`; see docs/oidc.md for the codes. 404 for an unknown provider.",
        schemas: { params: ProviderParam, querystring: CallbackQuery, response: { 302: null, 404: error } },
        async handler({ parameters, request, reply }) {
          const provider = providerOf(parameters.path.provider);
          const flow = await flows.open(request.cookies[FLOW_COOKIE]);
          // single use, whatever happens next
          flows.clear(reply, provider.id);
          try {
            if (!flow || flow.provider !== provider.id) throw new InvalidFlow('No sign-in flow cookie for this provider (missing, altered or expired)');
            if (parameters.query.state !== flow.state) throw new InvalidFlow("The state does not match the flow cookie's");
            const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
            const profile = await provider.profile(new URL(`${redirectUri(provider.id)}${query}`), flow);
            if (flow.link) {
              await identities.link(provider.id, profile, flow.link, originOf(request));
              return redirect(reply, `${appUrl}${DEFAULT_RETURN_TO}?linked=${provider.id}`);
            }
            const result = await identities.signIn(provider.id, profile, originOf(request));
            log.info('oidc/signed-in', `Signed in with ${provider.id}`, {
              provider: provider.id,
              'account-id': result.accountId,
              created: result.created,
              linked: result.linked,
            });
            return await completeSignIn(request, reply, result.accountId, provider.id, flow.returnTo);
          } catch (err) {
            const code = err instanceof InvalidFlow ? logInvalidFlow(err, provider.id) : refusal(err, provider.id);
            const page = flow?.link ? DEFAULT_RETURN_TO : LOG_IN_PAGE;
            return redirect(reply, `${appUrl}${page}?error=${code}&provider=${provider.id}`);
          }
        },
      }),
      route({
        method: 'POST',
        path: '/oauth/:provider/link',
        impersonation: 'forbidden',
        summary: 'Link a provider to the signed-in account',
        description:
          "Starts a link: sets the flow cookie (as the start does, naming the caller's account and session) and answers the " +
          "provider's authorization URL for the client to navigate to. Whoever signs in at the provider is then linked to this account, " +
          'whatever its email at the provider (the caller proved who it is), and a notice is emailed. 404 for an unknown provider, 503 when it cannot be reached.',
        auth: 'required',
        // a provider identity is a lasting way in: a proven address, and the caller proves itself again
        verifiedEmail: true,
        reauth: true,
        schemas: { params: ProviderParam, body: ref(LinkProvider), response: { 200: ref(AuthorizationUrl), 404: error, 503: error } },
        async handler({ parameters, user, reply }) {
          if (!user) throw unauthorized();
          const provider = providerOf(parameters.path.provider);
          try {
            const { flow, url } = await begin(provider, DEFAULT_RETURN_TO, { accountId: user.id, sessionId: user.sessionId });
            await flows.set(reply, flow);
            return { url: url.href };
          } catch (err) {
            if (!(err instanceof ProviderUnavailableError)) throw err;
            reply.header('retry-after', '30');
            throw serviceUnavailable(phrase('The sign-in provider {provider} cannot be reached; try again shortly', { provider: provider.id }));
          }
        },
      }),
    ],
  };

  function logInvalidFlow(err: InvalidFlow, provider: string): CallbackErrorCode {
    log.info('oidc/callback-refused', `Sign-in with ${provider} refused: invalid-state`, { provider, error: 'invalid-state', reason: err.message });
    return 'invalid-state';
  }
}

/** The callback does not answer a flow this browser started (no cookie, another provider's, or another state). */
class InvalidFlow extends Error {}
