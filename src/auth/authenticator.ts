/**
 * The JWT middleware's decision: who the caller is, from `Authorization: Bearer <token>`. The
 * token is an access token (JWT), or an organization's API key (`sk_…`, src/api-keys/): one
 * `startsWith` tells them apart, so the access token's fast path stays as it was.
 */
import { msg } from '../i18n/messages.js';
import type { FastifyRequest } from 'fastify';
import type { Authenticator, AuthResult } from '../http/app.js';
import { HttpError, unauthorized } from '../http/errors.js';
import { acceptsApiKeys, isOrgRoute, routeAuth, type ApiKeyCaller } from '../http/routes.js';
import type { AccessTokens, VerifyResult } from './access-tokens.js';
import { IN_PROCESS_MARK, type InProcessCallers } from './in-process-callers.js';

/** The marker every API key starts with. */
export const API_KEY_MARK = 'sk_';

/** Checks a presented API key: the caller, or the error to answer with (401, 429). */
export interface ApiKeyCheck {
  verify(key: string, address: string): ApiKeyCaller | HttpError | Promise<ApiKeyCaller | HttpError>;
}

export const API_KEYS_ONLY_ON_ORG_ROUTES = msg(
  "API keys only work on organization routes (/api/orgs/:id/…) and the query endpoint; this route needs an account's access token",
);
export const API_KEYS_NOT_ON_THIS_ROUTE = msg("This organization route acts as a person and does not take API keys; use an account's access token");

export const OTHER_RESOURCE = msg('Access token is for another resource');

/** A valid OAuth token for another resource (the MCP server's) is a failing one here: 401 `invalid_token` (RFC 8707). */
const toAuthResult =
  (resource: string) =>
  (result: VerifyResult): AuthResult =>
    !result.ok
      ? { failure: result.reason }
      : result.user.oauth && result.user.oauth.resource !== resource
        ? { failure: OTHER_RESOURCE }
        : { user: result.user };
const toKeyResult = (result: ApiKeyCaller | HttpError): AuthResult => (result instanceof HttpError ? { refuse: result } : { apiKey: result });

/**
 * `resource`: the API's (`APP_URL/api`), the only one whose OAuth tokens its routes take;
 * `inProcess`: the callers of requests the server makes to itself (in-process-callers.ts).
 */
export function bearerAuthenticator(
  tokens: AccessTokens,
  credentialCookies: readonly string[],
  resource: string,
  inProcess: InProcessCallers,
  apiKeys?: ApiKeyCheck,
): Authenticator {
  const toResult = toAuthResult(resource);
  return {
    credentialCookies,
    // answers without a promise for a token verified before (the common case: a client sends
    // the same token for its whole life), and for a key verified before
    authenticate(request: FastifyRequest): AuthResult | Promise<AuthResult> {
      const header = request.headers.authorization;
      if (!header) return {};
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) return { failure: msg('Unsupported Authorization header; use "Bearer <token>"') };
      if (apiKeys && m[1].startsWith(API_KEY_MARK)) {
        if (!acceptsApiKeys(request)) {
          // a public route ignores credentials (health, sign-up: a client that sends its key
          // everywhere is not refused there); one that needs a caller refuses the key before
          // any lookup, saying why, rather than ignoring it into a bare 401
          if (routeAuth(request) !== 'required') return {};
          return { refuse: unauthorized(isOrgRoute(request) ? API_KEYS_NOT_ON_THIS_ROUTE : API_KEYS_ONLY_ON_ORG_ROUTES) };
        }
        const result = apiKeys.verify(m[1], request.ip);
        return result instanceof Promise ? result.then(toKeyResult) : toKeyResult(result);
      }
      if (m[1].startsWith(IN_PROCESS_MARK)) {
        const user = inProcess.find(m[1], request.method, request.url);
        return user ? { user } : { failure: msg('Invalid access token') };
      }
      const known = tokens.verifyKnown(m[1]);
      return known ? toResult(known) : tokens.verify(m[1]).then(toResult);
    },
  };
}
