/**
 * Authentication's shared parts (docs/security.md): access tokens (JWT) and the refresh-token
 * families behind sessions, password hashing, the log-in and sign-up limits, the set of ended
 * sessions every instance refuses, and the JWT middleware's decision (the authenticator).
 */
import { defineModule } from '../runtime/module.js';
import { int, rateLimit, str } from '../runtime/settings.js';
import { AccessTokens } from './access-tokens.js';
import { bearerAuthenticator, type ApiKeyCheck } from './authenticator.js';
import { PasswordHasher } from './passwords.js';
import { LoginRateLimiter, SignUpRateLimiter } from './rate-limit.js';
import { IMPERSONATION_COOKIE, REFRESH_COOKIE, RefreshTokens } from './refresh-tokens.js';
import { RevokedSessions } from './revoked-sessions.js';
import { startSessionPurge } from './session-purge.js';

export type { ApiKeyCheck } from './authenticator.js';

export interface AuthServices {
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  passwords: PasswordHasher;
  loginLimiter: LoginRateLimiter;
  signUpLimiter: SignUpRateLimiter;
  revokedSessions: RevokedSessions;
  /** takes API keys (`sk_…`) as callers on the routes that accept them (src/api-keys/) */
  acceptApiKeys(check: ApiKeyCheck): void;
}

export const authModule = defineModule({
  name: 'auth',
  settings: (env) => ({
    jwtIssuer: str(env, 'JWT_ISSUER', 'saas-app'),
    jwtAudience: str(env, 'JWT_AUDIENCE', 'saas-app'),
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2_592_000, 1),
    refreshReuseGrace: int(env, 'REFRESH_REUSE_GRACE', 10, 0, 3600),
    loginLimitEmail: rateLimit(env, 'LOGIN_LIMIT_EMAIL', { count: 10, seconds: 900 }),
    loginLimitAddress: rateLimit(env, 'LOGIN_LIMIT_ADDRESS', { count: 100, seconds: 900 }),
    signupLimitAddress: rateLimit(env, 'SIGNUP_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
  }),
  async start(ctx, settings) {
    const { config, db, limiterStore } = ctx;
    const log = ctx.logs.logger('saas.auth');
    // ended sessions, so access tokens of a logged-out session are refused on every instance
    const revokedSessions = new RevokedSessions({ db, accessTtl: settings.accessTokenTtl, log, listener: ctx.listener });
    await revokedSessions.start();
    // sessions that ended long enough ago to matter to nothing: deleted hourly
    const sessionPurge = startSessionPurge(db, settings.accessTokenTtl, log);
    const accessTokens = new AccessTokens(
      {
        secret: config.jwtSecret,
        issuer: settings.jwtIssuer,
        audience: settings.jwtAudience,
        ttl: settings.accessTokenTtl,
      },
      revokedSessions,
    );
    const credentialCookies = [REFRESH_COOKIE, IMPERSONATION_COOKIE];
    let authenticator = bearerAuthenticator(accessTokens, credentialCookies);
    const services: AuthServices = {
      accessTokens,
      refreshTokens: new RefreshTokens(
        db,
        { secret: config.jwtSecret, ttl: settings.refreshTokenTtl, reuseGrace: settings.refreshReuseGrace },
        revokedSessions,
      ),
      passwords: new PasswordHasher(),
      loginLimiter: new LoginRateLimiter({ email: settings.loginLimitEmail, address: settings.loginLimitAddress }, limiterStore),
      signUpLimiter: new SignUpRateLimiter(settings.signupLimitAddress, limiterStore),
      revokedSessions,
      acceptApiKeys(check) {
        authenticator = bearerAuthenticator(accessTokens, credentialCookies, check);
      },
    };
    return {
      services,
      authenticator: { credentialCookies, authenticate: (request) => authenticator.authenticate(request) },
      async stop() {
        await sessionPurge.stop();
        await revokedSessions.stop();
      },
    };
  },
});
