/**
 * The OAuth 2.1 / OpenID Connect provider ("Sign in with <the product>"; docs/oauth.md):
 * `oidc-provider` at `/oauth` on the project's database, organizations' apps, the consent page's
 * API, connected apps, and the protected resource's metadata. Its tokens are verified by the
 * auth module's access tokens (same keys); route data `scopes` opens a route to them.
 */
import { LOG_OUT_COOKIES_KEY } from '../account/routes.js';
import { authModule } from '../auth/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { productModule } from '../product/module.js';
import { defineModule } from '../runtime/module.js';
import { oneOf, rateLimit } from '../runtime/settings.js';
import { purgeExpired } from './adapter.js';
import { OAuthAppService } from './apps.js';
import { Grants } from './grants.js';
import { LOG_OUT_COOKIES, providerCookies } from './cookies.js';
import { Interactions } from './interactions.js';
import { MountGuard } from './mount-guard.js';
import { registrationScopes } from './registration.js';
import { MetadataDocuments } from './client-metadata.js';
import { dnsResolver, systemResolver } from '../webhooks/address-guard.js';
import { webhookSettings } from '../webhooks/settings.js';
import { OAuthProvider, resourcesOf } from './provider.js';
import { connectedAppRoutes, interactionRoutes, oauthAppRoutes, protectedResourceRoutes } from './routes.js';
import { oauthSchemas } from './schemas.js';
import { API_SCOPES, mcpResourceOf, OAUTH_SCOPES_KEY, OIDC_SCOPES, type DeclaredScope } from '../shared/oauth-scopes.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { OAUTH_MESSAGES } from './messages/index.js';

const PURGE_EVERY_MS = 3_600_000;

export const oauthModule = defineModule({
  name: 'oauth',
  declares: {
    [MESSAGES_KEY]: [OAUTH_MESSAGES],
    [LOG_OUT_COOKIES_KEY]: LOG_OUT_COOKIES,
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'app-connected', category: 'security', description: 'an app or AI assistant was connected to the account, or given more scopes' },
    ],
  },
  settings: (env, config) => {
    const auth = authModule.settings!(env, config);
    return {
      dynamicRegistration: oneOf(env, 'OAUTH_DYNAMIC_REGISTRATION', ['on', 'off'] as const, 'off') === 'on',
      clientMetadataDocuments: oneOf(env, 'OAUTH_CLIENT_METADATA_DOCUMENTS', ['on', 'off'] as const, 'on') === 'on',
      // a metadata document is fetched as a webhook is sent: the same address rules and resolver
      fetch: (({ allowPrivate, dnsServers }) => ({ allowPrivate, dnsServers }))(webhookSettings(env, config.env === 'prod')),
      accessTokenTtl: auth.accessTokenTtl,
      refreshTokenTtl: auth.refreshTokenTtl,
      limits: {
        // a sign-in is a handful of requests; an address past this is a script
        requests: rateLimit(env, 'OAUTH_LIMIT_ADDRESS', { count: 120, seconds: 60 }),
        registrations: rateLimit(env, 'OAUTH_REGISTRATION_LIMIT_ADDRESS', { count: 5, seconds: 3600 }),
      },
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
    // the built-in API scopes, then those the modules of the system declare (a generated resource's)
    const apiScopes = [...API_SCOPES, ...ctx.declared<DeclaredScope>(OAUTH_SCOPES_KEY).map((d) => d.scope)];
    let allowedToRegister: readonly string[] = registrationScopes([]);
    const grants = new Grants({
      db,
      log,
      mcpResource: mcpResourceOf(config.appUrl),
      revocations: auth.revokedSessions,
      count: (event) => grantEvents?.inc({ event }),
    });
    const apps = new OAuthAppService({ db, log, grants });
    const provider = new OAuthProvider({
      config,
      db,
      log,
      keys: auth.signingKeys,
      apps,
      grants,
      settings,
      apiScopes,
      guard: new MountGuard(settings.limits, ctx.limiterStore, config.secureCookies),
      registrationScopes: () => allowedToRegister,
      metadataDocuments: new MetadataDocuments(
        {
          allowPrivate: settings.fetch.allowPrivate,
          resolve: settings.fetch.dnsServers.length > 0 ? dnsResolver(settings.fetch.dnsServers) : systemResolver,
          userAgent: `${ctx.use(productModule).name}-OAuth/${config.version}`,
        },
        () => allowedToRegister,
        log,
      ),
      counters: { tokenIssued: (grantType) => issued?.inc({ grant_type: grantType }), refused: (reason) => refusals?.inc({ reason }) },
    });
    const interactions = new Interactions({
      db,
      provider,
      notifications: ctx.use(notificationsModule).notifications,
      cookies: providerCookies(config),
      grants,
      resources: resourcesOf(config),
      apiScopes,
      granted: () => grantEvents?.inc({ event: 'created' }),
    });
    const purge = setInterval(
      () => void purgeExpired(db).catch((err: Error) => log.warn('oauth/purge-failed', `Purging expired OAuth records failed: ${err.message}`)),
      PURGE_EVERY_MS,
    );
    purge.unref();
    return {
      services: { apps, grants, provider },
      schemas: oauthSchemas([...OIDC_SCOPES, ...apiScopes]),
      routeGroups: [
        oauthAppRoutes(apps, ctx.use(orgsModule).memberships),
        interactionRoutes(interactions),
        connectedAppRoutes(grants),
        protectedResourceRoutes(config.appUrl, apiScopes, ctx.use(productModule).name, () => allowedToRegister),
      ],
      mounts: [
        {
          urls: ['/oauth', '/oauth/*', '/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/oauth'],
          handle: (req, res, clientAddress) => provider.handle(req, res, clientAddress),
        },
      ],
      // every route's and query kind's scopes are ones the provider grants (route data names them; modules declare their own)
      ready(app) {
        // a registered client (an MCP client) may ask every scope a tool needs
        allowedToRegister = registrationScopes(app.routeGroups.flatMap((g) => g.routes.flatMap((r) => (r.tool ? (r.scopes ?? []) : []))));
        const named = [...app.routeGroups.flatMap((g) => g.routes.flatMap((r) => r.scopes ?? [])), ...app.queries.flatMap((q) => q.scopes ?? [])];
        const unknown = named.filter((s) => !apiScopes.includes(s));
        if (unknown.length > 0)
          throw new Error(`Unknown OAuth scopes in route data: ${[...new Set(unknown)].join(', ')} (declare them: src/shared/oauth-scopes.ts, DeclaredScope)`);
      },
      async stop() {
        clearInterval(purge);
      },
    };
  },
});
