/**
 * JWT access tokens (HS256 via jose). The verifier pins the algorithm, issuer and audience
 * and refuses oversized tokens before parsing them, so `alg: none`, key confusion, foreign
 * tokens and header bombs all fail the same way.
 */
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { AuthUser } from '../http/routes.js';

export const MAX_TOKEN_LENGTH = 4096;

export interface AccessTokenSettings {
  secret: string;
  issuer: string;
  audience: string;
  /** seconds */
  ttl: number;
}

export type VerifyResult = { ok: true; user: AuthUser } | { ok: false; reason: string };

export class AccessTokens {
  private readonly key: Uint8Array;

  constructor(private readonly settings: AccessTokenSettings) {
    if (settings.secret.length < 32) throw new Error('The JWT secret must be at least 32 characters');
    this.key = new TextEncoder().encode(settings.secret);
  }

  get ttl(): number {
    return this.settings.ttl;
  }

  async issue(user: AuthUser): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ email: user.email })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.settings.ttl)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setJti(randomUUID())
      .sign(this.key);
  }

  async verify(token: string): Promise<VerifyResult> {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'Access token is too large' };
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.email !== 'string') return { ok: false, reason: 'Access token is missing claims' };
      return { ok: true, user: { id: payload.sub, email: payload.email } };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'Access token expired' };
      return { ok: false, reason: 'Invalid access token' };
    }
  }
}
