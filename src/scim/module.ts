/**
 * Directory sync (docs/sso.md, "SCIM"): SCIM 2.0 Users at `/scim/v2` for Okta, Entra ID and
 * Google, with per-organization bearer tokens; suspending a user ends its sessions everywhere.
 */
import { authModule } from '../auth/module.js';
import { counter } from '../auth/rate-limit.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { rateLimit } from '../runtime/settings.js';
import { ssoModule } from '../sso/module.js';
import { SCIM_PREFIX, scimRoutes, scimTokenRoutes } from './routes.js';
import { SCIM_SCHEMAS } from './schemas.js';
import { ScimTokenService } from './tokens.js';
import { ScimUserService } from './users.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { SCIM_MESSAGES } from './messages/index.js';

export const scimModule = defineModule({
  name: 'scim',
  declares: { [MESSAGES_KEY]: [SCIM_MESSAGES] },
  // SCIM_LIMIT_TOKEN: requests per token (a directory backs off on 429 with Retry-After)
  settings: (env) => ({ tokenLimit: rateLimit(env, 'SCIM_LIMIT_TOKEN', { count: 300, seconds: 60 }) }),
  start(ctx, settings) {
    const log = ctx.logs.logger('saas.scim');
    const { refreshTokens } = ctx.use(authModule);
    const { memberships } = ctx.use(orgsModule);
    const { domains } = ctx.use(ssoModule);
    const baseUrl = `${ctx.config.appUrl}${SCIM_PREFIX}`;
    const tokens = new ScimTokenService(ctx.db, log);
    const users = new ScimUserService({ db: ctx.db, domains, refreshTokens, baseUrl, log });
    return {
      services: { tokens, users },
      schemas: SCIM_SCHEMAS,
      routeGroups: [
        scimTokenRoutes(tokens, memberships),
        scimRoutes({ tokens, users, baseUrl, log, tokenLimiter: counter('scim-token', settings.tokenLimit, ctx.limiterStore) }),
      ],
    };
  },
});
