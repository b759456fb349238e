/**
 * The OAuth 2.1 / OpenID Connect provider ("Sign in with <the product>"; docs/oauth.md):
 * `oidc-provider` at `/oauth` on the project's database, organizations' apps, the consent page's
 * API, connected apps, and the protected resource's metadata. Its tokens are verified by the
 * auth module's access tokens (same keys); route data `scopes` opens a route to them.
 */
import { authModule } from '../auth/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { oneOf } from '../runtime/settings.js';
import { purgeExpired } from './adapter.js';
import { OAuthAppService } from './apps.js';
import { Grants } from './grants.js';
import { Interactions } from './interactions.js';
import { OAuthProvider, resourceOf } from './provider.js';
import { connectedAppRoutes, interactionRoutes, oauthAppRoutes, protectedResourceRoutes } from './routes.js';
import { OAUTH_SCHEMAS } from './schemas.js';

const PURGE_EVERY_MS = 3_600_000;

export const oauthModule = defineModule({
  name: 'oauth',
  settings: (env, config) => {
    const auth = authModule.settings!(env, config);
    return {
      dynamicRegistration: oneOf(env, 'OAUTH_DYNAMIC_REGISTRATION', ['on', 'off'] as const, 'off') === 'on',
      accessTokenTtl: auth.accessTokenTtl,
      refreshTokenTtl: auth.refreshTokenTtl,
    };
  },
  start(ctx, settings) {
    const { config, db } = ctx;
    const log = ctx.logs.logger('saas.oauth');
    const auth = ctx.use(authModule);
    const metrics = ctx.metrics;
    const issued = metrics?.counter(
      'saas_oauth_tokens_issued_total',
      'Tokens the OAuth provider issued, by grant type',
      ['grant_type'],
      [{ grant_type: 'authorization_code' }, { grant_type: 'refresh_token' }],
    );
    const grantEvents = metrics?.counter(
      'saas_oauth_grants_total',
      'OAuth grants made (an Allow) and ended',
      ['event'],
      [{ event: 'created' }, { event: 'revoked' }],
    );
    const refusals = metrics?.counter('saas_oauth_refusals_total', 'OAuth requests refused, by the protocol error', ['reason']);
    const grants = new Grants({ db, log, revocations: auth.revokedSessions, count: (event) => grantEvents?.inc({ event }) });
    const apps = new OAuthAppService({ db, log, grants });
    const provider = new OAuthProvider({
      config,
      db,
      log,
      keys: auth.signingKeys,
      apps,
      grants,
      settings,
      counters: { tokenIssued: (grantType) => issued?.inc({ grant_type: grantType }), refused: (reason) => refusals?.inc({ reason }) },
    });
    const interactions = new Interactions({ db, provider, grants, resource: resourceOf(config), granted: () => grantEvents?.inc({ event: 'created' }) });
    const purge = setInterval(
      () => void purgeExpired(db).catch((err: Error) => log.warn('oauth/purge-failed', `Purging expired OAuth records failed: ${err.message}`)),
      PURGE_EVERY_MS,
    );
    purge.unref();
    return {
      services: { apps, grants, provider },
      schemas: OAUTH_SCHEMAS,
      routeGroups: [
        oauthAppRoutes(apps, ctx.use(orgsModule).memberships),
        interactionRoutes(interactions),
        connectedAppRoutes(grants),
        protectedResourceRoutes(config.appUrl),
      ],
      mounts: [
        {
          urls: ['/oauth', '/oauth/*', '/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/oauth'],
          handle: (req, res) => provider.handle(req, res),
        },
      ],
      async stop() {
        clearInterval(purge);
      },
    };
  },
});
