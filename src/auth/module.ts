/**
 * Authentication's shared parts (docs/security.md): access tokens (JWT) and the refresh-token
 * families behind sessions, password hashing, the log-in and sign-up limits, the set of ended
 * sessions every instance refuses, and the JWT middleware's decision (the authenticator).
 */
import { defineModule } from '../runtime/module.js';
import { apiResourceOf, mcpResourceOf } from '../shared/oauth-scopes.js';
import { int, rateLimit, str } from '../runtime/settings.js';
import { AccessTokens, type TokenKeys } from './access-tokens.js';
import { bearerAuthenticator, type ApiKeyCheck } from './authenticator.js';
import { InProcessCallers } from './in-process-callers.js';
import { Jwks, jwksRoutes } from './jwks-routes.js';
import { defaultHashConcurrency, PasswordHasher } from './passwords.js';
import { LoginRateLimiter, SignUpRateLimiter } from './rate-limit.js';
import { IMPERSONATION_COOKIE, REFRESH_COOKIE, RefreshTokens } from './refresh-tokens.js';
import { RevokedSessions } from './revoked-sessions.js';
import { SecretBox } from './secret-box.js';
import { startSessionPurge } from './session-purge.js';
import { SigningKeys } from './signing-keys.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { AUTH_MESSAGES } from './messages/index.js';

/** The command `npm run keys:rotate` asks a running server holding the PGlite directory to run. */
export const ROTATE_KEYS_COMMAND = 'keys:rotate';
/** ID tokens live an hour (the provider's default): a replaced key stays published at least this long. */
export const ID_TOKEN_TTL = 3600;

/** Seconds a rotated-in key waits before it signs: 5 minutes, or one access-token lifetime when that is shorter. */
export const activationDelay = (accessTokenTtl: number) => Math.min(300, accessTokenTtl);

/** The box that seals the signing keys' private parts. */
export const signingKeyBox = (encryptionKey: string) => new SecretBox(encryptionKey, 'signing-key');

export type { ApiKeyCheck } from './authenticator.js';

export interface AuthServices {
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  passwords: PasswordHasher;
  loginLimiter: LoginRateLimiter;
  signUpLimiter: SignUpRateLimiter;
  revokedSessions: RevokedSessions;
  /** the signing keys (EdDSA access tokens, RS256 / ES256 ID tokens), shared with the OAuth provider */
  signingKeys: SigningKeys;
  /** takes API keys (`sk_…`) as callers on the routes that accept them (src/api-keys/) */
  acceptApiKeys(check: ApiKeyCheck): void;
  /** the API keys' check once the api-keys module gave it (the MCP server takes keys too) */
  apiKeyCheck(): ApiKeyCheck | undefined;
  /** callers of the requests the server makes to itself (the MCP server's tool calls) */
  inProcessCallers: InProcessCallers;
}

export const authModule = defineModule({
  name: 'auth',
  declares: { [MESSAGES_KEY]: [AUTH_MESSAGES] },
  settings: (env) => ({
    jwtIssuer: str(env, 'JWT_ISSUER', 'saas-app'),
    jwtAudience: str(env, 'JWT_AUDIENCE', 'saas-app'),
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2_592_000, 1),
    refreshReuseGrace: int(env, 'REFRESH_REUSE_GRACE', 10, 0, 3600),
    loginLimitEmail: rateLimit(env, 'LOGIN_LIMIT_EMAIL', { count: 10, seconds: 900 }),
    loginLimitAddress: rateLimit(env, 'LOGIN_LIMIT_ADDRESS', { count: 100, seconds: 900 }),
    signupLimitAddress: rateLimit(env, 'SIGNUP_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    signingKeyRotationDays: int(env, 'SIGNING_KEY_ROTATION_DAYS', 90, 1, 3650),
    // 0: one hash at a time on the embedded database, one per core on PostgreSQL (passwords.ts)
    passwordHashConcurrency: int(env, 'PASSWORD_HASH_CONCURRENCY', 0, 0, 64),
  }),
  async start(ctx, settings) {
    const { config, db, limiterStore } = ctx;
    const log = ctx.logs.logger('saas.auth');
    // ended sessions, so access tokens of a logged-out session are refused on every instance
    const revokedSessions = new RevokedSessions({ db, accessTtl: settings.accessTokenTtl, log, listener: ctx.listener });
    await revokedSessions.start();
    // sessions that ended long enough ago to matter to nothing: deleted hourly
    const sessionPurge = startSessionPurge(db, settings.accessTokenTtl, log);
    const signingKeys = new SigningKeys({
      db,
      box: signingKeyBox(config.encryptionKey),
      log,
      activationDelay: activationDelay(settings.accessTokenTtl),
      retention: Math.max(settings.accessTokenTtl, ID_TOKEN_TTL) + 60,
      rotationDays: settings.signingKeyRotationDays,
      listener: ctx.listener,
    });
    await signingKeys.start();
    ctx.database.serveCommand?.(ROTATE_KEYS_COMMAND, async () => {
      const kids = await signingKeys.rotate();
      log.info('auth/signing-keys-rotated', 'Signing keys rotated by command', { kids });
      return `New signing keys ${kids.join(', ')}: published now, signing in ${activationDelay(settings.accessTokenTtl)} s`;
    });
    const tokenKeys: TokenKeys = {
      signing() {
        const key = signingKeys.current('EdDSA');
        if (!key?.privateKey) throw new Error('No EdDSA signing key can sign');
        return { kid: key.kid, key: key.privateKey };
      },
      verifying: (kid) => {
        const key = signingKeys.find(kid);
        // an access token's key only: an ID-token key (EdDSA-id) never verifies a session
        return key?.kind === 'EdDSA' ? key.publicKey : undefined;
      },
      legacyUntil: () => (signingKeys.firstMadeAt === undefined ? undefined : signingKeys.firstMadeAt + settings.accessTokenTtl * 1000),
    };
    const accessTokens = new AccessTokens(
      {
        secret: config.jwtSecret,
        issuer: settings.jwtIssuer,
        audience: settings.jwtAudience,
        ttl: settings.accessTokenTtl,
        oauth: { issuer: `${config.appUrl}/oauth`, audiences: [apiResourceOf(config.appUrl), mcpResourceOf(config.appUrl)] },
      },
      revokedSessions,
      tokenKeys,
    );
    const credentialCookies = [REFRESH_COOKIE, IMPERSONATION_COOKIE];
    const apiResource = apiResourceOf(config.appUrl);
    const inProcessCallers = new InProcessCallers();
    let apiKeyCheck: ApiKeyCheck | undefined;
    let authenticator = bearerAuthenticator(accessTokens, credentialCookies, apiResource, inProcessCallers);
    const services: AuthServices = {
      accessTokens,
      refreshTokens: new RefreshTokens(
        db,
        { secret: config.jwtSecret, ttl: settings.refreshTokenTtl, reuseGrace: settings.refreshReuseGrace },
        revokedSessions,
      ),
      passwords: new PasswordHasher(settings.passwordHashConcurrency || defaultHashConcurrency(config.databaseUrl)),
      loginLimiter: new LoginRateLimiter({ email: settings.loginLimitEmail, address: settings.loginLimitAddress }, limiterStore),
      signUpLimiter: new SignUpRateLimiter(settings.signupLimitAddress, limiterStore),
      revokedSessions,
      signingKeys,
      inProcessCallers,
      apiKeyCheck: () => apiKeyCheck,
      acceptApiKeys(check) {
        apiKeyCheck = check;
        authenticator = bearerAuthenticator(accessTokens, credentialCookies, apiResource, inProcessCallers, check);
      },
    };
    return {
      services,
      authenticator: { credentialCookies, authenticate: (request) => authenticator.authenticate(request) },
      schemas: [Jwks],
      routeGroups: [jwksRoutes(signingKeys)],
      async stop() {
        await signingKeys.stop();
        await sessionPurge.stop();
        await revokedSessions.stop();
      },
    };
  },
});
