/** Named schemas of the OAuth routes (docs/oauth.md). */
import { Type, type Static, type TSchema } from 'typebox';
import { ALL_SCOPES } from '../shared/oauth-scopes.js';

/** What an app may ask: some of `scopes` (OpenID Connect's, the built-in API scopes and those modules declare). */
const scopesSchema = (scopes: readonly string[]) =>
  Type.Array(
    Type.Union(
      scopes.map((s) => Type.Literal(s)),
      { description: 'an OpenID Connect scope or an API scope (docs/oauth.md)' },
    ),
    { minItems: 1, maxItems: scopes.length, uniqueItems: true, description: 'what the app may ask (`invalid_scope` beyond)' },
  );
const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 10,
  description: 'absolute URLs without fragment: `https`, or `http` on a loopback address; a request must name one exactly',
});

const OAuthAppFields = {
  id: Type.String({ format: 'uuid' }),
  'client-id': Type.String(),
  name: Type.String(),
  'redirect-uris': Type.Array(Type.String()),
  confidential: Type.Boolean({ description: 'a server-side app with a secret (`client_secret_basic` or `client_secret_post`); public apps use PKCE alone' }),
  scopes: Type.Array(Type.String()),
  'created-at': Type.String({ format: 'date-time' }),
};

export const OAuthApp = Type.Object(OAuthAppFields, { $id: 'oauth-app', additionalProperties: false, description: 'An OAuth app, without its secret' });
export type OAuthApp = Static<typeof OAuthApp>;

export const CreatedOAuthApp = Type.Object(
  { ...OAuthAppFields, 'client-secret': Type.Optional(Type.String({ description: "a confidential app's secret: shown this once, only its hash is kept" })) },
  { $id: 'created-oauth-app', additionalProperties: false },
);
export type CreatedOAuthApp = Static<typeof CreatedOAuthApp>;

export const OAuthApps = Type.Object(
  { 'oauth-apps': Type.Array(OAuthApp, { description: 'newest first' }) },
  { $id: 'oauth-apps', additionalProperties: false },
);
export type OAuthApps = Static<typeof OAuthApps>;

const createOAuthApp = (scopes: readonly string[]) =>
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 100 }), 'redirect-uris': RedirectUris, confidential: Type.Boolean(), scopes: scopesSchema(scopes) },
    { $id: 'create-oauth-app', additionalProperties: false },
  );
export const CreateOAuthApp = createOAuthApp(ALL_SCOPES);
export type CreateOAuthApp = Static<typeof CreateOAuthApp>;

const updateOAuthApp = (scopes: readonly string[]) =>
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      'redirect-uris': Type.Optional(RedirectUris),
      scopes: Type.Optional(scopesSchema(scopes)),
    },
    { $id: 'update-oauth-app', additionalProperties: false },
  );
export const UpdateOAuthApp = updateOAuthApp(ALL_SCOPES);
export type UpdateOAuthApp = Static<typeof UpdateOAuthApp>;

export const ClientSecret = Type.Object(
  { 'client-secret': Type.String({ description: 'the new secret: shown this once; the previous one stopped working' }) },
  { $id: 'oauth-client-secret', additionalProperties: false },
);
export type ClientSecret = Static<typeof ClientSecret>;

export const OAuthAppPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), appId: Type.String({ format: 'uuid', description: "the app's id" }) },
  { additionalProperties: false },
);

const Organization = Type.Union([Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }, { additionalProperties: false }), Type.Null()], {
  description: 'the organization the app belongs to; null for a dynamically registered client',
});

const ClientHost = Type.Union([Type.String(), Type.Null()], {
  description: "the host of the client's metadata document (its `client_id` URL); null for an organization's app or a registered client",
});
const Reviewed = Type.Boolean({
  description:
    "false for a client the product has not reviewed (a Client ID Metadata Document's or one that registered itself); true for an organization's app",
});

export const OAuthInteraction = Type.Object(
  {
    uid: Type.String(),
    client: Type.Object(
      { 'client-id': Type.String(), name: Type.String(), organization: Organization, host: ClientHost, reviewed: Reviewed },
      { additionalProperties: false },
    ),
    scopes: Type.Array(Type.String(), { description: 'the scopes the app asks' }),
    'consent-required': Type.Boolean({ description: 'false when an earlier Allow covers every scope asked: the page allows at once' }),
    'login-required': Type.Boolean({
      description:
        'the app asked for a fresh sign-in (`prompt=login`, or `max_age` shorter than the session): an Allow needs the password, or, for an account without one, a sign-in since',
    }),
  },
  { $id: 'oauth-interaction', additionalProperties: false },
);
export type OAuthInteraction = Static<typeof OAuthInteraction>;

export const OAuthConsent = Type.Object(
  {
    allow: Type.Boolean(),
    password: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'the account password, when an Allow adds `offline_access` or a write scope, or the app asked for a fresh sign-in',
      }),
    ),
  },
  { $id: 'oauth-consent', additionalProperties: false },
);
export type OAuthConsent = Static<typeof OAuthConsent>;

export const OAuthConsentResult = Type.Object(
  { 'redirect-to': Type.String({ description: 'where the page sends the browser next (the provider, which answers the app)' }) },
  { $id: 'oauth-consent-result', additionalProperties: false },
);
export type OAuthConsentResult = Static<typeof OAuthConsentResult>;

export const InteractionPath = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const ConnectedApp = Type.Object(
  {
    id: Type.String({ description: "the grant's id" }),
    'client-id': Type.String(),
    name: Type.String(),
    organization: Organization,
    scopes: Type.Array(Type.String()),
    'created-at': Type.String({ format: 'date-time' }),
    'last-used-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reviewed: Reviewed,
    host: ClientHost,
    assistant: Type.Boolean({ description: 'its grant reaches the MCP server (`APP_URL/mcp`): an AI assistant acting for the person' }),
  },
  { $id: 'connected-app', additionalProperties: false },
);
export type ConnectedApp = Static<typeof ConnectedApp>;

export const ConnectedApps = Type.Object({ 'connected-apps': Type.Array(ConnectedApp) }, { $id: 'connected-apps', additionalProperties: false });
export type ConnectedApps = Static<typeof ConnectedApps>;

export const ConnectedAppPath = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export const ProtectedResource = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    resource_name: Type.String(),
  },
  { $id: 'oauth-protected-resource', additionalProperties: false, description: 'OAuth 2.0 Protected Resource Metadata (RFC 9728)' },
);
export type ProtectedResource = Static<typeof ProtectedResource>;

export const OAUTH_SCHEMAS: TSchema[] = [
  OAuthApp,
  CreatedOAuthApp,
  OAuthApps,
  CreateOAuthApp,
  UpdateOAuthApp,
  ClientSecret,
  OAuthInteraction,
  OAuthConsent,
  OAuthConsentResult,
  ConnectedApp,
  ConnectedApps,
  ProtectedResource,
];

/**
 * The named schemas for the system's scopes: the built-in set when no module declares more. Kept
 * by list, so systems built in one process with the same scopes share schema objects (and the
 * validators compiled for them: src/http/validators.ts).
 */
const schemasByScopes = new Map<string, TSchema[]>();
export function oauthSchemas(scopes: readonly string[]): TSchema[] {
  const key = scopes.join(' ');
  if (key === ALL_SCOPES.join(' ')) return OAUTH_SCHEMAS;
  let schemas = schemasByScopes.get(key);
  if (!schemas) {
    schemas = OAUTH_SCHEMAS.map((schema) => (schema === CreateOAuthApp ? createOAuthApp(scopes) : schema === UpdateOAuthApp ? updateOAuthApp(scopes) : schema));
    schemasByScopes.set(key, schemas);
  }
  return schemas;
}
