/**
 * The system: builds the components in order (config -> logging -> database -> services ->
 * app) and stops them in reverse. Tests build a whole system with one call; `server.ts`
 * builds one, listens, and stops it on SIGTERM/SIGINT.
 */
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { TSchema } from 'typebox';
import type { RouteGroup } from './http/routes.js';
import type { Config } from './config.js';
import { Redis } from 'ioredis';
import { accountRoutes, REFRESH_COOKIE } from './account/routes.js';
import { ACCOUNT_SCHEMAS } from './account/schemas.js';
import { AccountService } from './account/service.js';
import { AccountData } from './account/account-data.js';
import { LIFECYCLE_SCHEMAS } from './account/lifecycle-schemas.js';
import { lifecycleRoutes } from './account/lifecycle-routes.js';
import { AccountLifecycle } from './account/lifecycle-service.js';
import { AccountChecks } from './account/guard.js';
import { LifecycleRateLimiter } from './account/limits.js';
import { sessionRoutes } from './account/session-routes.js';
import { AccountSessions } from './account/sessions.js';
import { auditQueries } from './audit/queries.js';
import { auditRoutes } from './audit/routes.js';
import { AUDIT_SCHEMAS } from './audit/schemas.js';
import { AuditLog } from './audit/service.js';
import { AccessTokens } from './auth/access-tokens.js';
import { bearerAuthenticator } from './auth/authenticator.js';
import { CsrfService } from './auth/csrf.js';
import { startSessionPurge } from './auth/session-purge.js';
import { PasswordHasher } from './auth/passwords.js';
import { LoginRateLimiter, SignUpRateLimiter } from './auth/rate-limit.js';
import { RefreshTokens } from './auth/refresh-tokens.js';
import { RevokedSessions } from './auth/revoked-sessions.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { API_KEY_SCHEMAS } from './api-keys/schemas.js';
import { ApiKeyService } from './api-keys/service.js';
import { ApiKeyVerifier } from './api-keys/verifier.js';
import { accountQueries } from './account/queries.js';
import { billingRoutes } from './billing/routes.js';
import { BILLING_SCHEMAS } from './billing/schemas.js';
import { BillingService } from './billing/service.js';
import { warnAboutBilling } from './billing/settings.js';
import { stripeGateway } from './billing/stripe-gateway.js';
import { ErrorBody } from './http/errors.js';
import { BillingEffects } from './payments/effects.js';
import { paymentQueries, PaymentEventsPage } from './payments/queries.js';
import { paymentRoutes, WebhookReceipt } from './payments/routes.js';
import { PaymentService } from './payments/service.js';
import { stripeProvider } from './payments/stripe.js';
import { QueryRegistry } from './query/registry.js';
import { queryRoutes } from './query/routes.js';
import { openDatabase, type Database } from './db/database.js';
import { DatabaseListener } from './db/listener.js';
import { pendingMigrations } from './db/migrate.js';
import { healthRoutes } from './health/routes.js';
import { HealthLive, HealthReady, HealthStatus } from './health/routes.js';
import { buildApp } from './http/app.js';
import { ConnectionDrain } from './http/drain.js';
import { createLogging, type LoggingOptions } from './logging/index.js';
import { createMail, type Mail } from './mail/index.js';
import { mailboxHosts, mailboxRoutes } from './mail/routes.js';
import { appObservability, createMetrics, startTracing, type Metrics, type Tracing } from './observability/index.js';
import type { LogBackend, Logger } from './logging/logger.js';
import { membershipResolver } from './orgs/data.js';
import { InvitationService } from './orgs/invitations.js';
import { orgQueries } from './orgs/queries.js';
import { orgRoutes } from './orgs/routes.js';
import { ORG_SCHEMAS } from './orgs/schemas.js';
import { OrganizationService } from './orgs/service.js';
import { reportRoutes, UsageReport } from './reports/routes.js';
import { SecretBox } from './auth/secret-box.js';
import { counter } from './auth/rate-limit.js';
import { displayNameOf } from './mail/transport.js';
import { SecondFactorRateLimiter } from './mfa/limits.js';
import { twoFactorRoutes } from './mfa/routes.js';
import { MFA_SCHEMAS } from './mfa/schemas.js';
import { TwoFactorService } from './mfa/service.js';
import { passkeyRoutes, passkeySignInRoutes } from './passkeys/routes.js';
import { PASSKEY_SCHEMAS } from './passkeys/schemas.js';
import { PasskeyService } from './passkeys/service.js';
import { FlowCookies } from './oidc/flow-cookie.js';
import { IdentityService } from './oidc/identities.js';
import { identityRoutes } from './oidc/identity-routes.js';
import { ProviderClients } from './oidc/providers.js';
import { oidcRoutes } from './oidc/routes.js';
import { AUTH_PROVIDERS_FIELD, OIDC_SCHEMAS } from './oidc/schemas.js';

export interface System {
  config: Config;
  logs: LogBackend;
  database: Database;
  /** email: `mail.enqueue(trx, message)` in services; `mail.mailbox` to read what was written */
  mail: Mail;
  app: FastifyInstance;
  /** Prometheus metrics, when METRICS_PORT is set */
  metrics: Metrics | undefined;
  /** OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set */
  tracing: Tracing | undefined;
  /** `http://host:port` of the `/metrics` listener once listening (not in a cluster worker: the primary serves) */
  metricsUrl: string | undefined;
  /** listens on config.host:config.port (and METRICS_HOST:METRICS_PORT); resolves to the base URL */
  listen(): Promise<string>;
  /** true from the moment `stop()` is called: readiness answers 503 */
  readonly draining: boolean;
  /**
   * Graceful: readiness turns 503 at once; stop accepting; answer every accepted request and
   * every request arriving on an open connection (`Connection: close`); close idle connections;
   * at SHUTDOWN_TIMEOUT cut what is left (logged with a count); then Redis, the database, logs.
   */
  stop(): Promise<void>;
}

export interface SystemOptions extends LoggingOptions {
  /** this process is a cluster worker (WEB_CONCURRENCY > 1) */
  clusterWorker?: boolean;
  /** more route groups (and the named schemas they use), e.g. probes in tests */
  extraRouteGroups?: RouteGroup[];
  extraSchemas?: TSchema[];
}

export async function buildSystem(config: Config, options: SystemOptions = {}): Promise<System> {
  const { backend: logs, redact } = createLogging(config, options);
  const log = logs.logger('saas.system');
  const stops: Array<[string, () => Promise<void>]> = [['logging', () => logs.close()]];

  const stopAll = async () => {
    for (const [name, stop] of stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        if (name !== 'logging') log.error('system/stop-failed', `Stopping ${name} failed: ${(err as Error).message}`);
      }
    }
    stops.length = 0;
  };

  try {
    if (config.jwtSecretGenerated) {
      log.warn('system/generated-jwt-secret', 'JWT_SECRET is not set: using a random secret; tokens will not survive a restart');
    }
    // stopped last but logging, so the spans of the shutdown are exported
    const tracing = await startTracing(config);
    if (tracing) stops.push(['tracing', () => tracing.shutdown()]);
    const database = await openDatabase(config, logs, { aroundQuery: tracing?.aroundQuery });
    stops.push(['database', () => database.close()]);
    const metrics = await createMetrics(config, database);
    if (metrics && options.clusterWorker) metrics.shareWithClusterPrimary();

    let redis: Redis | undefined;
    if (config.redisUrl) {
      const redisLog = logs.logger('ioredis', 'slf4j');
      redis = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: false });
      redis.on('error', (err: Error) => redisLog.warn('ioredis/error', err.message));
      await redis.connect();
      const client = redis;
      stops.push(['redis', async () => { await client.quit(); }]);
    }

    // stopped after the HTTP server (requests may still queue mail), before the database
    const mail = createMail(config, database.db, logs, { onDelivery: metrics && ((outcome) => metrics.mailDelivery(outcome)) });
    mail.worker.start();
    stops.push(['mail', () => mail.worker.stop(config.shutdownTimeoutMs)]);

    const startedAt = Date.now();
    let draining = false;
    const csrf = new CsrfService(config.sessionSecret);
    const limiterStore = redis ? { redis } : options.clusterWorker ? 'cluster' as const : 'memory' as const;
    // other instances' changes to what this one keeps in memory: one LISTEN connection for all channels
    const listener = new DatabaseListener({ source: database.notifications, log: logs.logger('saas.db') });
    // ended sessions, so access tokens of a logged-out session are refused on every instance
    const revokedSessions = new RevokedSessions({ db: database.db, accessTtl: config.accessTokenTtl, log: logs.logger('saas.auth'), listener });
    // verified API keys, forgotten on every instance when revoked
    const apiKeyLog = logs.logger('saas.api-keys');
    const apiKeyVerifier = new ApiKeyVerifier({ db: database.db, log: apiKeyLog, limit: config.apiKeyLimitAddress, store: limiterStore, listener });
    await revokedSessions.start();
    stops.push(['revoked-sessions', () => revokedSessions.stop()]);
    // sessions that ended long enough ago to matter to nothing: deleted hourly
    const sessionPurge = startSessionPurge(database.db, config.accessTokenTtl, logs.logger('saas.auth'));
    stops.push(['session-purge', () => sessionPurge.stop()]);
    // last-used writes under way finish before the database closes
    stops.push(['api-keys', () => apiKeyVerifier.stop()]);
    await listener.start();
    stops.push(['listener', () => listener.stop()]);
    const accessTokens = new AccessTokens({
      secret: config.jwtSecret, issuer: config.jwtIssuer, audience: config.jwtAudience, ttl: config.accessTokenTtl,
    }, revokedSessions);
    const refreshTokens = new RefreshTokens(database.db, {
      secret: config.jwtSecret, ttl: config.refreshTokenTtl, reuseGrace: config.refreshReuseGrace,
    }, revokedSessions);
    const passwords = new PasswordHasher();
    const loginLimiter = new LoginRateLimiter({ email: config.loginLimitEmail, address: config.loginLimitAddress }, limiterStore);
    const accountLog = logs.logger('saas.account');
    // the product's name, as the mail's From names it: authenticator apps and passkey prompts show it
    const productName = displayNameOf(config.mail.from) ?? 'SaaS';
    const twoFactor = new TwoFactorService({
      db: database.db, passwords, loginLimiter, log: accountLog, issuer: productName,
      secrets: new SecretBox(config.encryptionKey, 'totp-secret'),
      backupCodes: new SecretBox(config.encryptionKey, 'backup-code'),
      limiter: new SecondFactorRateLimiter({ account: config.mfaLimitAccount, address: config.mfaLimitAddress }, limiterStore),
      onFailure: metrics && (() => metrics.logIn('failure')),
    });
    const passkeys = new PasskeyService({
      db: database.db, passwords, loginLimiter, log: accountLog, appUrl: config.appUrl, rpName: productName,
      signInLimiter: counter('passkey-sign-in-address', config.passkeyLimitAddress, limiterStore),
    });
    const signUpLimiter = new SignUpRateLimiter(config.signupLimitAddress, limiterStore);
    const accounts = new AccountService({
      db: database.db,
      passwords,
      accessTokens,
      refreshTokens,
      loginLimiter,
      signUpLimiter,
      mail,
      log: accountLog,
      onLogIn: metrics && ((outcome) => metrics.logIn(outcome)),
      secondFactor: twoFactor,
    });
    const lifecycle = new AccountLifecycle({
      db: database.db, passwords, refreshTokens, mail, loginLimiter, log: accountLog,
      onApiKeysRevoked: (ids) => { for (const id of ids) apiKeyVerifier.forget(id); },
      limits: new LifecycleRateLimiter({
        resendAccount: config.resendLimitAccount, resendAddress: config.resendLimitAddress,
        forgotEmail: config.forgotPasswordLimitEmail, forgotAddress: config.forgotPasswordLimitAddress,
      }, limiterStore),
    });
    // forgot-password work and refused log-ins' audit entries, answered before they finished: done before the database closes
    stops.push(['account-lifecycle', () => lifecycle.settle()]);
    stops.push(['accounts', () => accounts.settle()]);
    const accountSessions = new AccountSessions(database.db, refreshTokens, accountLog);
    const secureCookies = config.env === 'prod';
    const billingLog = logs.logger('saas.billing');
    const billing = new BillingService({
      db: database.db, settings: config.billing, appUrl: config.appUrl, gateway: await stripeGateway(config.billing), log: billingLog,
    });
    // deleting organizations (an account's deletion takes those it alone owns) cancels their subscriptions first
    const cancelSubscriptions = (ids: readonly string[]) => billing.cancelForDeletion(ids);
    const accountData = new AccountData({
      db: database.db, passwords, loginLimiter, refreshTokens, sessions: accountSessions, log: accountLog, beforeOrganizationsDeleted: cancelSubscriptions,
    });
    const paymentLog = logs.logger('saas.payments');
    const billingEffects = new BillingEffects({ mail, log: paymentLog, planOf: (priceId) => billing.planName(priceId) });
    const payments = new PaymentService(database.db, [stripeProvider(config.stripeWebhookSecrets)], billingEffects, paymentLog, {
      onWebhook: metrics && ((provider, type, outcome) => metrics.webhook(provider, type, outcome)),
    });
    const orgLog = logs.logger('saas.orgs');
    const orgs = new OrganizationService(database.db, orgLog, cancelSubscriptions);
    const invitations = new InvitationService({ db: database.db, mail, log: orgLog });
    const memberships = membershipResolver(database.db);
    const oidcLog = logs.logger('saas.oidc');
    const signInProviders = new ProviderClients(config.oidcProviders, oidcLog);
    const identities = new IdentityService({ db: database.db, log: oidcLog, signUpLimiter, mail });
    const auditLog = new AuditLog(database.db);
    const apiKeys = new ApiKeyService({ db: database.db, log: apiKeyLog, onRevoked: (id) => apiKeyVerifier.forget(id) });
    // embedded named schemas come before the ones that embed them (organization: subscription; account-export: exported-membership, exported-audit-entry, passkey, identity)
    const schemas = [HealthStatus, HealthLive, HealthReady, ...ACCOUNT_SCHEMAS, ...ORG_SCHEMAS, ...AUDIT_SCHEMAS, ...API_KEY_SCHEMAS, ...MFA_SCHEMAS, ...PASSKEY_SCHEMAS, ...OIDC_SCHEMAS, ...LIFECYCLE_SCHEMAS, WebhookReceipt, PaymentEventsPage, ...BILLING_SCHEMAS, UsageReport, ...(options.extraSchemas ?? [])];
    const queries = new QueryRegistry([...accountQueries(accounts), ...orgQueries(orgs), ...auditQueries(auditLog, memberships), ...paymentQueries(payments)], [ErrorBody, ...schemas], { memberships });

    // the paid features (route data `requires`): their plans are checked against BILLING_PLANS at start-up
    const reports = reportRoutes(database.db, memberships, billing.subscriptionOf);
    warnAboutBilling(config.billing, { env: config.env, webhookSecrets: config.stripeWebhookSecrets }, billingLog, [reports]);
    const app = await buildApp({
      config,
      logs,
      redact,
      csrf,
      authenticator: bearerAuthenticator(accessTokens, [REFRESH_COOKIE], apiKeyVerifier),
      // route data `verifiedEmail` and `reauth` (src/account/guard.ts)
      accountGuard: new AccountChecks({ db: database.db, passwords, loginLimiter, log: accountLog }),
      schemas,
      observability: appObservability(metrics, tracing),
      // the sign-in buttons' providers, in the page: the log-in page asks nothing to show them
      pageFields: { [AUTH_PROVIDERS_FIELD]: JSON.stringify(signInProviders.list()) },
      routeGroups: [
        healthRoutes({
          version: config.version,
          startedAt,
          pingDatabase: (ms) => database.ping(ms),
          pendingMigrations: () => pendingMigrations(database.db as unknown as Kysely<unknown>),
          draining: () => draining,
        }),
        accountRoutes(accounts, { secureCookies }),
        lifecycleRoutes(lifecycle),
        sessionRoutes(accountSessions, accountData, { secureCookies }),
        twoFactorRoutes(twoFactor, accounts, { secureCookies }),
        passkeyRoutes(passkeys),
        passkeySignInRoutes(passkeys, accounts, { secureCookies }),
        identityRoutes(identities),
        oidcRoutes({
          providers: signInProviders, identities, accounts, appUrl: config.appUrl, log: oidcLog,
          flows: new FlowCookies(config.sessionSecret, secureCookies), cookies: { secureCookies },
        }),
        orgRoutes(orgs, invitations, memberships),
        auditRoutes(auditLog, memberships),
        apiKeyRoutes(apiKeys, memberships),
        paymentRoutes(payments),
        billingRoutes(billing, memberships),
        reports,
        queryRoutes(queries),
        // the mailbox shows live tokens: never outside dev
        ...(config.env === 'dev' ? [mailboxRoutes(mail.mailbox, mail.transport, mailboxHosts([config.appUrl, ...config.allowedOrigins]))] : []),
        ...(options.extraRouteGroups ?? []),
      ],
    });
    // SHUTDOWN_DELAY: serving on with readiness at 503 before the listener closes (docs/deployment.md, "Shutdown")
    const drain = new ConnectionDrain(app.server, { delayMs: config.shutdownDelayMs });
    stops.push(['http', () => closeApp(app, drain, config.shutdownTimeoutMs, log)]);
    await app.ready();
    // discovery in the background: a provider that is down delays no start-up (src/oidc/providers.ts)
    signInProviders.warmUp();

    const system: System = {
      config,
      logs,
      database,
      mail,
      app,
      metrics,
      tracing,
      metricsUrl: undefined,
      async listen() {
        if (metrics && config.metrics && !options.clusterWorker) {
          const { startMetricsServer } = await import('./observability/metrics-server.js');
          const metricsLog = logs.logger('saas.metrics');
          const server = await startMetricsServer(config.metrics.host, config.metrics.port, {
            contentType: metrics.contentType, body: () => metrics.scrape(),
          }, (err) => metricsLog.error('metrics/scrape-failed', `Collecting the metrics failed: ${err.message}`));
          stops.push(['metrics', () => server.close()]);
          system.metricsUrl = server.url;
          metricsLog.info('metrics/listening', `Metrics on ${server.url}/metrics`, { address: server.url });
        }
        const address = await app.listen({ port: config.port, host: config.host });
        log.info('system/listening', `Listening on ${address}`, { address, env: config.env, db: database.kind, pid: process.pid });
        return address;
      },
      get draining() {
        return draining;
      },
      async stop() {
        draining = true;
        log.info('system/stopping', 'Shutting down');
        await stopAll();
      },
    };
    return system;
  } catch (err) {
    log.error('system/start-failed', `Start-up failed: ${(err as Error).message}`, { class: (err as Error).constructor?.name });
    await stopAll();
    throw err;
  }
}

/**
 * Drains the HTTP server (see http/drain.ts), then closes the app (its onClose hooks). What is
 * still open after `timeoutMs` is cut and logged with a count.
 */
async function closeApp(app: FastifyInstance, drain: ConnectionDrain, timeoutMs: number, log: Logger): Promise<void> {
  const { cut, cutInFlight } = await drain.drain(timeoutMs);
  if (cut > 0) {
    log.warn('system/shutdown-deadline', `SHUTDOWN_TIMEOUT (${timeoutMs} ms) reached: cut ${cut} connections, ${cutInFlight} with a request in flight`,
      { cut, 'cut-in-flight': cutInFlight, 'timeout-ms': timeoutMs });
  } else {
    log.info('system/drained', 'Every connection answered and closed');
  }
  await app.close();
}
