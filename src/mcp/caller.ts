/**
 * Who calls the MCP server (docs/mcp.md): an OAuth access token issued for `APP_URL/mcp` (its `aud`;
 * RFC 8707), the account through its app with the token's scopes, or an organization's API key
 * (`Bearer sk_…`), with its organization and role. The product's own session tokens, and OAuth
 * tokens for the API, are refused: an agent reaches the product only through a grant the person
 * made to it, or a key an admin made.
 */
import type { AccessTokens } from '../auth/access-tokens.js';
import { API_KEY_MARK, type ApiKeyCheck } from '../auth/authenticator.js';
import { HttpError, type Words } from '../http/errors.js';
import { msg, phrase } from '../i18n/messages.js';
import { hasRole, type ApiKeyCaller, type AuthUser, type OrgRole } from '../http/routes.js';

export type McpCaller =
  | { kind: 'account'; user: AuthUser & { oauth: NonNullable<AuthUser['oauth']> } }
  | { kind: 'api-key'; key: ApiKeyCaller; credential: string };

/** The caller, or why there is none: `presented` when a credential came (then `error="invalid_token"`), or another answer (429). */
export type Authentication = { caller: McpCaller } | { failure: Words; presented: boolean } | { refuse: HttpError };

export interface CallerDeps {
  tokens: AccessTokens;
  /** the API keys' check; undefined in a system without the api-keys module */
  keys(): ApiKeyCheck | undefined;
  /** `APP_URL/mcp`: the audience of the tokens taken */
  resource: string;
}

export async function authenticate(deps: CallerDeps, header: string | undefined, address: string): Promise<Authentication> {
  if (!header) return { failure: msg('Authentication required'), presented: false };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return { failure: msg('Unsupported Authorization header; use "Bearer <token>"'), presented: true };
  const credential = m[1]!;
  const keys = deps.keys();
  if (credential.startsWith(API_KEY_MARK) && keys) {
    const result = await keys.verify(credential, address);
    if (!(result instanceof HttpError)) return { caller: { kind: 'api-key', key: result, credential } };
    return result.status === 401 ? { failure: result.words(result.body.message), presented: true } : { refuse: result };
  }
  const verified = await deps.tokens.verify(credential);
  if (!verified.ok) return { failure: verified.reason, presented: true };
  const { user } = verified;
  if (!user.oauth) return { failure: msg("The MCP server takes OAuth tokens issued for it and API keys, not the product's session tokens"), presented: true };
  if (user.oauth.resource !== deps.resource)
    return { failure: phrase('Access token is for another resource; ask one for {resource}', { resource: deps.resource }), presented: true };
  return { caller: { kind: 'account', user: { ...user, oauth: user.oauth } } };
}

/**
 * Whether `tools/list` shows the caller a tool: to a token, one of the route's scopes held (its
 * account's role differs per organization: the call's route decides); to a key, a route that takes
 * keys and whose role the key's reaches. Listing decides nothing: the call runs the route's gates.
 */
export function mayCall(caller: McpCaller, tool: { scopes: readonly string[]; apiKeys: boolean; orgRole: OrgRole | undefined }): boolean {
  if (caller.kind === 'account') return tool.scopes.some((s) => caller.user.oauth.scopes.includes(s));
  return tool.apiKeys && (tool.orgRole === undefined || hasRole(caller.key.role, tool.orgRole));
}

/** How the caller shows in a log entry: its id, never its credential. */
export function callerOf(caller: McpCaller): Record<string, string> {
  return caller.kind === 'api-key'
    ? { 'api-key': caller.key.id, 'organization-id': caller.key.organizationId }
    : { 'account-id': caller.user.id, 'client-id': caller.user.oauth.clientId };
}

/** The MCP request's client: its address (TRUST_PROXY applied) and user agent. */
export interface CallClient {
  address: string;
  userAgent: string | undefined;
  /** the MCP request's, handed to the call's route (a key's errors are in the request's language) */
  acceptLanguage: string | undefined;
  /** a refusal's words in the caller's language: the account's, else the request's */
  say(words: Words): string;
}
