/**
 * Dynamic client registration (RFC 7591, `OAUTH_DYNAMIC_REGISTRATION=on`; docs/oauth.md): what a
 * client that registers itself (an MCP client) may ask. The same rules as an organization's apps
 * and no more: public (PKCE alone), within the registration scopes, redirect URIs `https` or `http`
 * on a loopback address (at most 10), a name of at most 100 characters, a small document; no
 * logout redirect is kept (the provider has no end-session endpoint, so oidc-provider drops
 * `post_logout_redirect_uris`: one would be a zero-click open redirect). A registered client that no grant uses expires (REGISTERED_CLIENT_IDLE).
 */
import { redirectUriProblem } from './redirect-uris.js';

type OidcErrors = typeof import('oidc-provider')['errors'];

/** What a registration that names no scope gets: the OpenID ones and the account's. */
export const DEFAULT_REGISTRATION_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'account:read'];

/**
 * What dynamically registered clients (MCP clients) may ask at most: the OpenID scopes and every
 * API scope a tool needs (route data `tool`: docs/mcp.md); what the person allows at consent
 * bounds what one gets.
 */
export function registrationScopes(toolScopes: readonly string[]): string[] {
  return [...new Set([...DEFAULT_REGISTRATION_SCOPES, ...toolScopes])];
}

/** Seconds a registered client lives with no grant using it; a grant keeps it while the grant lives (grants.ts). */
export const REGISTERED_CLIENT_IDLE_SECONDS = 7 * 86_400;

const MAX_NAME = 100;
const MAX_REDIRECT_URIS = 10;
const MAX_METADATA_BYTES = 8 * 1024;

/** Refuses what an organization's app could not have; answers the client's idle lifetime. */
export function checkRegistration(payload: Record<string, unknown>, errors: OidcErrors, allowed: readonly string[]): number {
  const refuse = (description: string) => new errors.InvalidClientMetadata(description);
  if (payload.token_endpoint_auth_method !== 'none') throw refuse('only public clients may register: token_endpoint_auth_method must be none');
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
  const beyond = scopes.filter((s) => !allowed.includes(s));
  if (beyond.length > 0) throw refuse(`scope may hold at most ${allowed.join(' ')}; not ${beyond.join(' ')}`);
  if (scopes.length === 0) payload.scope = DEFAULT_REGISTRATION_SCOPES.join(' ');
  const name = payload.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || [...name].length > MAX_NAME))
    throw refuse(`client_name must be 1 to ${MAX_NAME} characters`);
  if (typeof name === 'string' && /[\p{Cc}\p{Cf}]/u.test(name))
    throw refuse('client_name must not hold control or formatting characters (a bidi override, a zero-width character)');
  const uris = Array.isArray(payload.redirect_uris) ? payload.redirect_uris : [];
  if (uris.length > MAX_REDIRECT_URIS) throw new errors.InvalidRedirectUri(`at most ${MAX_REDIRECT_URIS} redirect_uris`);
  for (const uri of uris) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : 'must be a string';
    if (problem) throw new errors.InvalidRedirectUri(`redirect_uris: ${problem}`);
  }
  // whatever else it names (URIs, contacts, keys) stays small: a registration is anonymous storage
  if (Buffer.byteLength(JSON.stringify(payload)) > MAX_METADATA_BYTES) throw refuse(`the client metadata must be under ${MAX_METADATA_BYTES / 1024} KB`);
  return REGISTERED_CLIENT_IDLE_SECONDS;
}
