/** The JWT middleware's decision: who the caller is, from `Authorization: Bearer <token>`. */
import type { FastifyRequest } from 'fastify';
import type { Authenticator, AuthResult } from '../http/app.js';
import type { AccessTokens, VerifyResult } from './access-tokens.js';

const toAuthResult = (result: VerifyResult): AuthResult => (result.ok ? { user: result.user } : { failure: result.reason });

export function bearerAuthenticator(tokens: AccessTokens, credentialCookies: readonly string[]): Authenticator {
  return {
    credentialCookies,
    // answers without a promise for a token verified before (the common case: a client sends
    // the same token for its whole life)
    authenticate(request: FastifyRequest): AuthResult | Promise<AuthResult> {
      const header = request.headers.authorization;
      if (!header) return {};
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) return { failure: 'Unsupported Authorization header; use "Bearer <token>"' };
      const known = tokens.verifyKnown(m[1]);
      return known ? toAuthResult(known) : tokens.verify(m[1]).then(toAuthResult);
    },
  };
}
