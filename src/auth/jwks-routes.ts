/**
 * `GET /.well-known/jwks.json`: the public keys of every signing key that signs, will sign, or
 * whose tokens may still be alive (signing-keys.ts), for third parties verifying our tokens with
 * jose's `createRemoteJWKSet`. Cached by clients for at most 5 minutes, so a new key is fetched
 * before it signs.
 */
import { Type, type Static } from 'typebox';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { SigningKeys } from './signing-keys.js';

export const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kid: Type.String(),
          alg: Type.Union([Type.Literal('EdDSA'), Type.Literal('RS256'), Type.Literal('ES256')]),
          use: Type.Literal('sig'),
          kty: Type.String(),
          crv: Type.Optional(Type.String()),
          x: Type.Optional(Type.String()),
          y: Type.Optional(Type.String()),
          n: Type.Optional(Type.String()),
          e: Type.Optional(Type.String()),
        },
        // a private member (d, p, q...) would break the schema: the answer is checked against it
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'jwks', additionalProperties: false, description: 'A JSON Web Key Set (RFC 7517): public keys only' },
);
export type Jwks = Static<typeof Jwks>;

/** at most 300 s (docs/oauth.md, "Signing keys"): a rotation's key signs 5 minutes after it is published */
export const JWKS_MAX_AGE = 300;

export function jwksRoutes(keys: SigningKeys): RouteGroup {
  return {
    prefix: '/.well-known',
    tags: ['Keys'],
    auth: 'none',
    routes: [
      route({
        method: 'GET',
        path: '/jwks.json',
        summary: 'The public signing keys (JWKS)',
        description:
          "The keys that verify the server's access tokens (EdDSA) and ID tokens (RS256, ES256): the current ones, the next ones " +
          'of a rotation, and the previous ones until the last token they signed has expired.',
        schemas: { response: { 200: ref(Jwks) } },
        handler({ reply }) {
          reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE}`);
          return keys.jwks() as Jwks;
        },
      }),
    ],
  };
}
