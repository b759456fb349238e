/** Named schemas of provider sign-in (docs/oidc.md); one source for validation, OpenAPI and types. */
import { Type, type Static } from 'typebox';

/** The id of the page's hidden field that carries `[{id, name}]` of the providers (JSON), for the client's buttons. */
export const AUTH_PROVIDERS_FIELD = '__auth-providers';

export const AuthProvider = Type.Object(
  {
    id: Type.String({ description: 'the name in OIDC_PROVIDERS: the path segment of `/api/auth/oauth/<id>/start`' }),
    name: Type.String({ description: 'the text for the sign-in button' }),
  },
  { $id: 'auth-provider', additionalProperties: false },
);

export const AuthProviders = Type.Object(
  { providers: Type.Array(AuthProvider) },
  { $id: 'auth-providers', additionalProperties: false, description: 'the configured sign-in providers, in OIDC_PROVIDERS order' },
);

export const Identity = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    provider: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], { description: 'the address the provider asserts as verified, as last seen' }),
    'created-at': Type.String({ format: 'date-time' }),
    'last-used-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the last sign-in through it' }),
  },
  { $id: 'identity', additionalProperties: false, description: "an account's identity at a sign-in provider" },
);
export type Identity = Static<typeof Identity>;

export const Identities = Type.Object(
  {
    identities: Type.Array(Identity),
    'has-password': Type.Boolean({ description: 'the account has a password (the other way to sign in)' }),
  },
  { $id: 'identities', additionalProperties: false },
);
export type Identities = Static<typeof Identities>;

export const AuthorizationUrl = Type.Object(
  { url: Type.String({ description: "the provider's authorization URL: navigate the browser there" }) },
  { $id: 'authorization-url', additionalProperties: false },
);

export const LinkProvider = Type.Object(
  {
    password: Type.Optional(
      Type.String({
        maxLength: 128,
        description: "the account's password (re-authentication); an account without one signs in again instead",
      }),
    ),
  },
  { $id: 'link-provider', additionalProperties: false },
);

export const ProviderParam = Type.Object({ provider: Type.String({ maxLength: 64 }) });
export const IdentityParam = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const StartQuery = Type.Object(
  { 'return-to': Type.Optional(Type.String({ maxLength: 512, description: 'a path of this app to land on after signing in (default `/account`)' })) },
  { additionalProperties: false },
);

/**
 * The authorization response; providers add parameters of their own (Google: `authuser`, `hd`,
 * `prompt`, `scope`). The lengths fit together within the 8192-character request target the
 * pipeline answers (a longer one is 414 before any route).
 */
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 2048 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    iss: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 128 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: Type.String({ maxLength: 256 }), maxProperties: 12 },
);

export const OIDC_SCHEMAS = [AuthProvider, AuthProviders, Identity, Identities, AuthorizationUrl, LinkProvider];
