/**
 * Passkeys (WebAuthn, docs/sign-in.md): registered by a signed-in account, and a sign-in of
 * their own without an email.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import { counter } from '../http/rate-limit.js';
import { productModule } from '../product/module.js';
import { defineModule } from '../runtime/module.js';
import { rateLimit } from '../runtime/settings.js';
import { passkeyRoutes, passkeySignInRoutes } from './routes.js';
import { PASSKEY_SCHEMAS } from './schemas.js';
import { PasskeyService, type PasskeyDeps } from './service.js';
import { PasskeySignInService } from './sign-in.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { PASSKEYS_MESSAGES } from './messages/index.js';

export const passkeysModule = defineModule({
  name: 'passkeys',
  declares: { [MESSAGES_KEY]: [PASSKEYS_MESSAGES] },
  settings: (env) => ({ signInAddress: rateLimit(env, 'PASSKEY_LIMIT_ADDRESS', { count: 60, seconds: 900 }) }),
  start(ctx, settings) {
    const { passwords, loginLimiter } = ctx.use(authModule);
    const deps: PasskeyDeps = {
      db: ctx.db,
      passwords,
      loginLimiter,
      log: ctx.logs.logger('saas.account'),
      notices: ctx.use(accountModule).notices,
      appUrl: ctx.config.appUrl,
      rpName: ctx.use(productModule).name,
      signInLimiter: counter('passkey-sign-in-address', settings.signInAddress, ctx.limiterStore),
    };
    const passkeys = new PasskeyService(deps);
    const passkeySignIn = new PasskeySignInService(deps);
    return {
      services: { passkeys },
      schemas: PASSKEY_SCHEMAS,
      routeGroups: [passkeyRoutes(passkeys), passkeySignInRoutes(passkeySignIn, ctx.use(accountModule).accounts, { secureCookies: ctx.secureCookies })],
    };
  },
});
