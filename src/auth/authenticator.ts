/** The JWT middleware's decision: who the caller is, from `Authorization: Bearer <token>`. */
import type { FastifyRequest } from 'fastify';
import type { Authenticator } from '../http/app.js';
import type { AccessTokens } from './access-tokens.js';

export function bearerAuthenticator(tokens: AccessTokens, credentialCookies: readonly string[]): Authenticator {
  return {
    credentialCookies,
    async authenticate(request: FastifyRequest) {
      const header = request.headers.authorization;
      if (!header) return {};
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) return { failure: 'Unsupported Authorization header; use "Bearer <token>"' };
      const result = await tokens.verify(m[1]);
      return result.ok ? { user: result.user } : { failure: result.reason };
    },
  };
}
