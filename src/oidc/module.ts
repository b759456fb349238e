/**
 * Sign-in with OpenID Connect / OAuth 2 providers (docs/oidc.md), and the identities linked to
 * accounts.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { defineModule } from '../runtime/module.js';
import { parseOidcProviders } from './config.js';
import { FlowCookies } from './flow-cookie.js';
import { IdentityService } from './identities.js';
import { identityRoutes } from './identity-routes.js';
import { ProviderClients } from './providers.js';
import { oidcRoutes } from './routes.js';
import { AUTH_PROVIDERS_FIELD, OIDC_SCHEMAS } from './schemas.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { OIDC_MESSAGES } from './messages/index.js';

export const oidcModule = defineModule({
  name: 'oidc',
  declares: {
    [NOTIFICATION_KINDS_KEY]: [{ kind: 'identity-linked', category: 'security', description: "a provider's identity was linked to the account" }],
    [MESSAGES_KEY]: [OIDC_MESSAGES],
  },
  settings: (env) => parseOidcProviders(env),
  start(ctx, settings) {
    const { config, secureCookies } = ctx;
    const log = ctx.logs.logger('saas.oidc');
    const providers = new ProviderClients(settings, log);
    const identities = new IdentityService({
      db: ctx.db,
      log,
      signUpLimiter: ctx.use(authModule).signUpLimiter,
      notifications: ctx.use(notificationsModule).notifications,
      notices: ctx.use(accountModule).notices,
    });
    return {
      services: { identities },
      schemas: OIDC_SCHEMAS,
      routeGroups: [
        identityRoutes(identities),
        oidcRoutes({
          providers,
          identities,
          accounts: ctx.use(accountModule).accounts,
          appUrl: config.appUrl,
          log,
          flows: new FlowCookies(config.sessionSecret, secureCookies),
          cookies: { secureCookies },
        }),
      ],
      // the sign-in buttons' providers, in the page: the log-in page asks nothing to show them
      pageFields: { [AUTH_PROVIDERS_FIELD]: JSON.stringify(providers.list()) },
      // discovery in the background: a provider that is down delays no start-up (providers.ts)
      ready: () => providers.warmUp(),
    };
  },
});
