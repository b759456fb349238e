/**
 * The OAuth provider's scopes (docs/oauth.md, "Scopes"), shared by the server (route data `scopes`,
 * the provider) and the browser (the consent page's words). OpenID Connect's own scopes first, then
 * the API scopes routes declare.
 */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export const API_SCOPES = ['account:read', 'orgs:read', 'orgs:write'] as const;
export type ApiScope = (typeof API_SCOPES)[number];
export const ALL_SCOPES: readonly string[] = [...OIDC_SCOPES, ...API_SCOPES];

/**
 * What a module declares (`declares: {[OAUTH_SCOPES_KEY]: [...]}` in its definition) to add API
 * scopes of its own, such as a generated resource's `projects:read`, with the consent screen's words.
 */
export interface DeclaredScope {
  scope: string;
  words: string;
}
export const OAUTH_SCOPES_KEY = 'oauth/scopes';
/** The shape of every API scope: `<area>:read` or `<area>:write`. */
export const API_SCOPE_PATTERN = /^[a-z][a-z0-9-]*:(read|write)$/;

/** What each scope lets an app do, in the words of the consent screen. */
export const SCOPE_WORDS: Readonly<Record<string, string>> = {
  openid: 'Know who you are (your account id)',
  profile: 'See your name',
  email: 'See your email address and whether it is verified',
  offline_access: 'Stay connected when you are not using it',
  'account:read': 'Read your account',
  'orgs:read': 'See your organizations and their members',
  'orgs:write': 'Create organizations and rename them',
};

/**
 * The provider's two protected resources (RFC 8707 / RFC 9728): the API and the MCP server. An
 * access token carries the one its client asked as `aud` and works only there.
 */
export const apiResourceOf = (appUrl: string) => `${appUrl}/api`;
export const mcpResourceOf = (appUrl: string) => `${appUrl}/mcp`;
