/**
 * JWT access tokens (HS256 via jose). The verifier pins the algorithm, issuer and audience
 * and refuses oversized tokens before parsing them, so `alg: none`, key confusion, foreign
 * tokens and header bombs all fail the same way.
 *
 * Every token names its session (`sid`, the refresh family) and when that session's sign-in
 * happened (`auth_time`, as in OpenID Connect: a refresh keeps it). A token whose session has ended
 * is refused, cached or not: the check is one lookup in the in-memory set of ended sessions
 * (see revoked-sessions.ts), so it costs no database query.
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

/** Answers whether a session has ended; called on every authenticated request, so it must be cheap. */
export interface SessionRevocationCheck {
  isRevoked(sessionId: string): boolean;
}

export const SESSION_ENDED = 'Access token revoked: its session has ended';

const CACHE_MAX = 10_000;

export class AccessTokens {
  // imported once: handing jose the raw bytes makes it import a CryptoKey on every call,
  // which measured at most of a verification's cost
  private readonly key: Promise<CryptoKey>;
  // A client presents the same token for its whole life: verified tokens are remembered until
  // they expire. The key is the whole token, signature included, so a changed token never hits.
  private readonly verified = new Map<string, { user: AuthUser; exp: number }>();

  constructor(
    private readonly settings: AccessTokenSettings,
    private readonly sessions: SessionRevocationCheck,
  ) {
    if (settings.secret.length < 32) throw new Error('The JWT secret must be at least 32 characters');
    this.key = crypto.subtle.importKey('raw', new TextEncoder().encode(settings.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  }

  get ttl(): number {
    return this.settings.ttl;
  }

  /** Seconds a token issued now lives: the lifetime, or less when its session ends sooner (`notAfter`). */
  lifetime(notAfter?: Date): number {
    return notAfter ? Math.max(1, Math.min(this.settings.ttl, Math.floor((notAfter.getTime() - Date.now()) / 1000))) : this.settings.ttl;
  }

  /** A token of the user's session; an impersonated session's carry `act: {sub: <admin id>}` (RFC 8693). */
  async issue(user: AuthUser, notAfter?: Date): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      email: user.email,
      sid: user.sessionId,
      ...(user.authTime !== undefined ? { auth_time: user.authTime } : {}),
      ...(user.actor ? { act: { sub: user.actor.id } } : {}),
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.lifetime(notAfter))
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setJti(randomUUID())
      .sign(await this.key);
  }

  /**
   * The answer for a token that needs no cryptography: one verified before (valid or now
   * expired) or one too large to parse. Undefined means: call {@link verify}.
   */
  verifyKnown(token: string): VerifyResult | undefined {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'Access token is too large' };
    const known = this.verified.get(token);
    if (!known) return undefined;
    if (known.exp * 1000 <= Date.now()) {
      this.verified.delete(token);
      return { ok: false, reason: 'Access token expired' };
    }
    // kept in the cache when revoked: presenting it again stays as cheap as this lookup
    return this.sessions.isRevoked(known.user.sessionId) ? { ok: false, reason: SESSION_ENDED } : { ok: true, user: known.user };
  }

  async verify(token: string): Promise<VerifyResult> {
    const known = this.verifyKnown(token);
    if (known) return known;
    try {
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      // a token without `sid` (issued before sessions were named) cannot be revoked: refused
      if (typeof payload.sub !== 'string' || typeof payload.email !== 'string' || typeof payload.sid !== 'string' || payload.sid === '') {
        return { ok: false, reason: 'Access token is missing claims' };
      }
      const act = payload.act as { sub?: unknown } | undefined;
      if (act !== undefined && (typeof act?.sub !== 'string' || act.sub === '')) return { ok: false, reason: 'Access token is missing claims' };
      const user: AuthUser = { id: payload.sub, email: payload.email, sessionId: payload.sid, ...(act ? { actor: { id: act.sub as string } } : {}) };
      // OpenID Connect's claim: when the session's sign-in happened (re-authentication reads it)
      if (typeof payload.auth_time === 'number' && Number.isSafeInteger(payload.auth_time)) user.authTime = payload.auth_time;
      if (this.verified.size >= CACHE_MAX) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, { user, exp: payload.exp! });
      return this.sessions.isRevoked(user.sessionId) ? { ok: false, reason: SESSION_ENDED } : { ok: true, user };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'Access token expired' };
      return { ok: false, reason: 'Invalid access token' };
    }
  }
}
