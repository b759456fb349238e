/**
 * Two-factor with TOTP and backup codes (docs/sign-in.md): the second step of a password
 * log-in, plugged into the account module's log-in.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import { SecretBox } from '../auth/secret-box.js';
import { productModule } from '../product/module.js';
import { defineModule } from '../runtime/module.js';
import { rateLimit } from '../runtime/settings.js';
import { SecondFactorRateLimiter } from './limits.js';
import { twoFactorRoutes } from './routes.js';
import { MFA_SCHEMAS } from './schemas.js';
import { MfaLogInService } from './log-in.js';
import { TwoFactorService, type TwoFactorDeps } from './service.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { MFA_MESSAGES } from './messages/index.js';

export const mfaModule = defineModule({
  name: 'mfa',
  declares: { [MESSAGES_KEY]: [MFA_MESSAGES] },
  settings: (env) => ({
    account: rateLimit(env, 'MFA_LIMIT_ACCOUNT', { count: 10, seconds: 900 }),
    address: rateLimit(env, 'MFA_LIMIT_ADDRESS', { count: 100, seconds: 900 }),
  }),
  start(ctx, limits) {
    const { config, metrics } = ctx;
    const { passwords, loginLimiter } = ctx.use(authModule);
    const { accounts } = ctx.use(accountModule);
    const deps: TwoFactorDeps = {
      db: ctx.db,
      passwords,
      loginLimiter,
      log: ctx.logs.logger('saas.account'),
      issuer: ctx.use(productModule).name,
      secrets: new SecretBox(config.encryptionKey, 'totp-secret'),
      backupCodes: new SecretBox(config.encryptionKey, 'backup-code'),
      limiter: new SecondFactorRateLimiter(limits, ctx.limiterStore),
      onFailure: metrics && (() => metrics.logIn('failure')),
      notices: ctx.use(accountModule).notices,
    };
    const twoFactor = new TwoFactorService(deps);
    const mfaLogIn = new MfaLogInService(deps);
    accounts.useSecondFactor(mfaLogIn);
    return {
      services: { twoFactor },
      schemas: MFA_SCHEMAS,
      routeGroups: [twoFactorRoutes(twoFactor, mfaLogIn, accounts, { secureCookies: ctx.secureCookies })],
    };
  },
});
