/**
 * Organization API keys (docs/api-keys.md): made and revoked by admins, taken as the caller on
 * the routes that opt in (`apiKeys: true`), forgotten on every instance when revoked.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { rateLimit } from '../runtime/settings.js';
import { apiKeyRoutes } from './routes.js';
import { API_KEY_SCHEMAS } from './schemas.js';
import { ApiKeyService } from './service.js';
import { ApiKeyVerifier } from './verifier.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { API_KEYS_MESSAGES } from './messages/index.js';

export const apiKeysModule = defineModule({
  name: 'api-keys',
  declares: { [MESSAGES_KEY]: [API_KEYS_MESSAGES] },
  settings: (env) => ({ lookupsPerAddress: rateLimit(env, 'API_KEY_LIMIT_ADDRESS', { count: 20, seconds: 60 }) }),
  start(ctx, settings) {
    const log = ctx.logs.logger('saas.api-keys');
    // verified keys, forgotten on every instance when revoked
    const verifier = new ApiKeyVerifier({ db: ctx.db, log, limit: settings.lookupsPerAddress, store: ctx.limiterStore, listener: ctx.listener });
    ctx.use(authModule).acceptApiKeys(verifier);
    ctx.use(accountModule).onApiKeysRevoked((ids) => {
      for (const id of ids) verifier.forget(id);
    });
    const apiKeys = new ApiKeyService({ db: ctx.db, log, onRevoked: (id) => verifier.forget(id) });
    return {
      services: { apiKeys },
      schemas: API_KEY_SCHEMAS,
      routeGroups: [apiKeyRoutes(apiKeys, ctx.use(orgsModule).memberships)],
      // last-used writes under way finish before the database closes
      stop: () => verifier.stop(),
    };
  },
});
