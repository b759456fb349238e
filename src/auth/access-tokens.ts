/**
 * JWT access tokens (EdDSA via jose, `kid` naming the database key that signed: signing-keys.ts).
 * The verifier pins the algorithm, issuer and audience and refuses oversized tokens before
 * parsing them, so `alg: none`, key confusion, foreign tokens and header bombs all fail the same
 * way. Tokens signed with JWT_SECRET (HS256) before the keys existed are accepted while one of
 * them can still be alive (nobody is logged out by the upgrade), one access-token lifetime past
 * the first key's making, then never; nothing new is signed with it.
 *
 * The OAuth provider's access tokens (RFC 9068, `typ: at+jwt`, src/oauth/) are verified here too,
 * with the same keys: their caller is the account (`sub`) through an app (`client_id`) with the
 * token's scopes (`oauth`) for one resource (`aud`: the API or the MCP server, each taking only its
 * own: authenticator.ts, src/mcp/), and their `sid` is the grant, so revoking it refuses them like
 * an ended session.
 *
 * Every token names its session (`sid`, the refresh family) and when that session's sign-in
 * happened (`auth_time`, as in OpenID Connect: a refresh keeps it). A token whose session has ended
 * is refused, cached or not: the check is one lookup in the in-memory set of ended sessions
 * (see revoked-sessions.ts), so it costs no database query.
 */
import { msg } from '../i18n/messages.js';
import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { AuthUser } from '../http/routes.js';

export const MAX_TOKEN_LENGTH = 4096;

export interface AccessTokenSettings {
  /** JWT_SECRET: verifies the HS256 tokens signed before the signing keys (never signs) */
  secret: string;
  issuer: string;
  audience: string;
  /** seconds */
  ttl: number;
  /**
   * the OAuth provider's issuer (`APP_URL/oauth`) and resources (`APP_URL/api`, `APP_URL/mcp`):
   * its tokens' `iss` and `aud`; the caller's `oauth.resource` says which one a token is for
   */
  oauth?: { issuer: string; audiences: readonly string[] };
}

/** The keys that sign (the current EdDSA key) and verify (any published key, by kid). */
export interface TokenKeys {
  signing(): { kid: string; key: KeyObject };
  verifying(kid: string): KeyObject | undefined;
  /**
   * Until when (ms) a token signed with JWT_SECRET may still be alive: the first signing key's
   * making plus the longest access-token lifetime; past it none is accepted, whatever its claims
   * say (whoever holds the secret could mint them forever). Undefined before any key exists.
   */
  legacyUntil(): number | undefined;
}

export type VerifyResult = { ok: true; user: AuthUser } | { ok: false; reason: string };

/** Answers whether a session has ended; called on every authenticated request, so it must be cheap. */
export interface SessionRevocationCheck {
  isRevoked(sessionId: string): boolean;
}

export const SESSION_ENDED = msg('Access token revoked: its session has ended');

const CACHE_MAX = 10_000;
/** marks the claims of a verified OAuth access token */
const OAUTH = Symbol('oauth');
/** marks the claims of a JWT_SECRET token with when such tokens stop being accepted (ms) */
const LEGACY = Symbol('legacy');

export class AccessTokens {
  // JWT_SECRET's key, for tokens from before the signing keys; imported once: handing jose the raw
  // bytes makes it import a CryptoKey on every call, which measured at most of a verification's cost
  private readonly key: Promise<CryptoKey>;
  // A client presents the same token for its whole life: verified tokens are remembered until
  // they expire. The key is the whole token, signature included, so a changed token never hits.
  private readonly verified = new Map<string, { user: AuthUser; exp: number }>();

  constructor(
    private readonly settings: AccessTokenSettings,
    private readonly sessions: SessionRevocationCheck,
    private readonly keys: TokenKeys,
  ) {
    if (settings.secret.length < 32) throw new Error('The JWT secret must be at least 32 characters');
    this.key = crypto.subtle.importKey('raw', new TextEncoder().encode(settings.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
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
    const { kid, key } = this.keys.signing();
    return new SignJWT({
      email: user.email,
      sid: user.sessionId,
      ...(user.authTime !== undefined ? { auth_time: user.authTime } : {}),
      ...(user.actor ? { act: { sub: user.actor.id } } : {}),
      // the account's language, so that its error answers speak it without a read (docs/i18n.md)
      ...(user.locale ? { locale: user.locale } : {}),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid })
      .setSubject(user.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.lifetime(notAfter))
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setJti(randomUUID())
      .sign(key);
  }

  /**
   * The answer for a token that needs no cryptography: one verified before (valid or now
   * expired) or one too large to parse. Undefined means: call {@link verify}.
   */
  verifyKnown(token: string): VerifyResult | undefined {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: msg('Access token is too large') };
    const known = this.verified.get(token);
    if (!known) return undefined;
    if (known.exp * 1000 <= Date.now()) {
      this.verified.delete(token);
      return { ok: false, reason: msg('Access token expired') };
    }
    // kept in the cache when revoked: presenting it again stays as cheap as this lookup
    return this.sessions.isRevoked(known.user.sessionId) ? { ok: false, reason: SESSION_ENDED } : { ok: true, user: known.user };
  }

  async verify(token: string): Promise<VerifyResult> {
    const known = this.verifyKnown(token);
    if (known) return known;
    try {
      const payload = await this.verifySignature(token);
      const user = payload && this.userOf(payload);
      if (!user) return { ok: false, reason: payload ? msg('Access token is missing claims') : msg('Invalid access token') };
      if (this.verified.size >= CACHE_MAX) this.verified.delete(this.verified.keys().next().value as string);
      // a JWT_SECRET token is remembered no longer than such tokens are accepted
      const legacyUntil = (payload as { [LEGACY]?: number })[LEGACY];
      this.verified.set(token, { user, exp: legacyUntil === undefined ? payload.exp! : Math.min(payload.exp!, Math.floor(legacyUntil / 1000)) });
      return this.sessions.isRevoked(user.sessionId) ? { ok: false, reason: SESSION_ENDED } : { ok: true, user };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: msg('Access token expired') };
      return { ok: false, reason: msg('Invalid access token') };
    }
  }

  /** The claims of a token signed by a published key (or, from before, JWT_SECRET); undefined for an unknown key. */
  private async verifySignature(token: string): Promise<JWTPayload | undefined> {
    const header = decodeProtectedHeader(token);
    const requiredClaims = ['sub', 'exp', 'iat', 'jti'];
    if (header.alg === 'HS256') {
      const until = this.keys.legacyUntil();
      if (until !== undefined && Date.now() >= until) return undefined;
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims,
      });
      if (until !== undefined) (payload as { [LEGACY]?: number })[LEGACY] = until;
      return payload;
    }
    const key = typeof header.kid === 'string' ? this.keys.verifying(header.kid) : undefined;
    if (!key || header.alg !== 'EdDSA') return undefined;
    const oauth = header.typ === 'at+jwt' ? this.settings.oauth : undefined;
    if (header.typ === 'at+jwt' && !oauth) return undefined;
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      issuer: oauth?.issuer ?? this.settings.issuer,
      audience: oauth ? [...oauth.audiences] : this.settings.audience,
      requiredClaims: oauth ? [...requiredClaims, 'client_id'] : requiredClaims,
      ...(oauth ? { typ: 'at+jwt' } : {}),
    });
    if (oauth) (payload as { [OAUTH]?: true })[OAUTH] = true;
    return payload;
  }

  /** The caller a verified token names; undefined when a claim is missing. */
  private userOf(payload: JWTPayload): AuthUser | undefined {
    // a token without `sid` (issued before sessions were named) cannot be revoked: refused
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || payload.sid === '') return undefined;
    if ((payload as { [OAUTH]?: true })[OAUTH]) {
      if (typeof payload.client_id !== 'string') return undefined;
      const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
      // one audience, one of ours (jwtVerify checked it is among them): the resource the token is for
      const resource = typeof payload.aud === 'string' ? payload.aud : undefined;
      if (!resource) return undefined;
      const user: AuthUser = { id: payload.sub, email: '', sessionId: payload.sid, oauth: { clientId: payload.client_id, scopes, resource } };
      if (typeof payload.locale === 'string') user.locale = payload.locale;
      return user;
    }
    if (typeof payload.email !== 'string') return undefined;
    const act = payload.act as { sub?: unknown } | undefined;
    if (act !== undefined && (typeof act?.sub !== 'string' || act.sub === '')) return undefined;
    const user: AuthUser = { id: payload.sub, email: payload.email, sessionId: payload.sid, ...(act ? { actor: { id: act.sub as string } } : {}) };
    // OpenID Connect's claim: when the session's sign-in happened (re-authentication reads it)
    if (typeof payload.auth_time === 'number' && Number.isSafeInteger(payload.auth_time)) user.authTime = payload.auth_time;
    if (typeof payload.locale === 'string') user.locale = payload.locale;
    return user;
  }
}
