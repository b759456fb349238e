/**
 * The system: the infrastructure, then the feature modules in the order of {@link MODULES}
 * (each may use those before it), then the HTTP app; stopped in reverse. Tests build a whole
 * system with one call; `server.ts` builds one, listens, and stops it on SIGTERM/SIGINT.
 * Adding a capability adds one line to MODULES (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { MESSAGES_KEY, Translator, type Catalogs } from './i18n/messages.js';
import { HTTP_MESSAGES } from './http/messages/index.js';
import { buildApp } from './http/app.js';
import { closeApp, ConnectionDrain } from './http/drain.js';
import type { RouteGroup } from './http/routes.js';
import { embeddedFirst } from './http/schema-order.js';
import type { LogBackend } from './logging/logger.js';
import { appObservability, type Metrics, type Tracing } from './observability/index.js';
import { observabilityModule, type ObservabilityServices } from './observability/module.js';
import { startInfrastructure, startLogging, Stops, type InfrastructureOptions } from './runtime/infrastructure.js';
import { readSettings, startModules, type AnyModule } from './runtime/start-modules.js';
import { API_SCOPES, OAUTH_SCOPES_KEY, SCOPE_WORDS, type DeclaredScope } from './shared/oauth-scopes.js';
import { accountModule } from './account/module.js';
import { adminModule } from './admin/module.js';
import { apiKeysModule } from './api-keys/module.js';
import { auditModule } from './audit/module.js';
import { auditStreamsModule } from './audit-streams/module.js';
import { authModule } from './auth/module.js';
import { billingModule } from './billing/module.js';
import { healthModule } from './health/module.js';
import { mailModule, type Mail } from './mail/module.js';
import { mcpModule } from './mcp/module.js';
import { mfaModule } from './mfa/module.js';
import { notificationsModule } from './notifications/module.js';
import { oauthModule } from './oauth/module.js';
import { oidcModule } from './oidc/module.js';
import { orgsModule } from './orgs/module.js';
import { passkeysModule } from './passkeys/module.js';
import { productModule } from './product/module.js';
import { paymentsModule } from './payments/module.js';
import { queryModule } from './query/module.js';
import { reportsModule } from './reports/module.js';
import { scimModule } from './scim/module.js';
import { ssoModule } from './sso/module.js';
import { storageModule } from './storage/module.js';
import { webhooksModule } from './webhooks/module.js';

/** The feature modules, in start order: each uses only modules above it; they stop bottom-up. */
export const MODULES: readonly AnyModule[] = [
  observabilityModule,
  healthModule,
  authModule,
  mailModule,
  productModule,
  notificationsModule, // before every module that notifies (their notice emails are its email channel)
  accountModule,
  mfaModule,
  passkeysModule,
  oidcModule,
  orgsModule,
  billingModule,
  storageModule, // files: avatars, logos, resources' file fields (after billing: its storage limit plugs in)
  auditModule,
  apiKeysModule,
  oauthModule, // the OAuth provider: apps of organizations, grants of accounts
  paymentsModule,
  reportsModule,
  webhooksModule,
  auditStreamsModule, // the audit log to customers' SIEMs (uses the webhooks' guarded sender)
  adminModule,
  ssoModule,
  scimModule, // enterprise sign-on, then directory sync (it uses sso's verified domains)
  mcpModule, // the product as an MCP server: its tools are the routes of every module (read once all started)
  queryModule, // last: serves the query kinds of every module above
];

export interface System {
  config: Config;
  logs: LogBackend;
  database: Database;
  /** email: `mail.enqueue(trx, message)` in services; `mail.mailbox` to read what was written */
  mail: Mail;
  app: FastifyInstance;
  metrics: Metrics | undefined; // when METRICS_PORT is set
  tracing: Tracing | undefined; // when OTEL_EXPORTER_OTLP_ENDPOINT is set
  /** `http://host:port` of the `/metrics` listener (not in a cluster worker: the primary serves) */
  metricsUrl: string | undefined;
  /** the started services of a module of MODULES (tests reach e.g. the mailbox through `mailModule`) */
  services<S>(module: { start(...args: never[]): { services: S } | Promise<{ services: S }> }): S;
  /** listens on config.host:config.port; resolves to the base URL (the metrics listener started with the system) */
  listen(): Promise<string>;
  readonly draining: boolean; // true from the moment `stop()` is called: readiness answers 503
  /** Graceful: readiness 503 at once, the HTTP drain (http/drain.ts), then the modules in reverse, Redis, the database, logs. */
  stop(): Promise<void>;
}
export interface SystemOptions extends InfrastructureOptions {
  /** more route groups (and the named schemas they use), e.g. probes in tests */
  extraRouteGroups?: RouteGroup[];
  extraSchemas?: TSchema[];
}

/** The API scopes with their words: the built-in ones, then those the modules declare. */
function apiScopeWords(modules: readonly AnyModule[]): Record<string, string> {
  const declared = modules.flatMap((m) => (m.declares?.[OAUTH_SCOPES_KEY] ?? []) as DeclaredScope[]);
  return Object.fromEntries([...API_SCOPES.map((scope) => [scope, SCOPE_WORDS[scope] ?? scope]), ...declared.map((d) => [d.scope, d.words])]);
}

/** Every module's settings, validated (a ConfigError names the variable): server.ts checks them before it starts. */
export const checkSettings = (config: Config) => readSettings(MODULES, config);

export async function buildSystem(config: Config, options: SystemOptions = {}): Promise<System> {
  const settings = checkSettings(config);
  let draining = false;
  const stops = new Stops(() => logs.logger('saas.system'));
  const { logs, redact } = startLogging(config, options, stops);
  const log = logs.logger('saas.system');
  try {
    if (config.jwtSecretGenerated) {
      log.warn(
        'system/generated-jwt-secret',
        'JWT_SECRET is not set: using a random secret; sessions, two-factor secrets and webhook signing secrets will not survive a restart',
      );
    }
    if (config.jwtSecretFile)
      log.info('system/kept-dev-secret', 'JWT_SECRET is not set: using the development secret kept beside the database', { file: config.jwtSecretFile });
    const infra = await startInfrastructure(config, options, stops, { logs, redact });
    const { database, metrics, tracing, listener } = infra;
    const services = new Map<unknown, unknown>();
    const servicesOf = <S>(module: unknown): S => {
      if (!services.has(module)) throw new Error('No such module in this system');
      return services.get(module) as S;
    };
    const modules = await startModules(
      MODULES,
      {
        ...infra,
        config,
        db: database.db,
        clusterWorker: options.clusterWorker === true,
        secureCookies: config.env === 'prod',
        startedAt: Date.now(),
        draining: () => draining,
      },
      stops,
      settings,
      services,
    );
    // every module subscribed during its start: one LISTEN for all channels; stopped before the modules
    await listener.start();
    stops.add('listener', () => listener.stop());
    const app = await buildApp({
      config,
      logs,
      redact,
      csrf: infra.csrf,
      authenticator: modules.authenticator,
      accountGuard: modules.accountGuard,
      usageGate: modules.usageGate,
      schemas: embeddedFirst([...modules.schemas, ...(options.extraSchemas ?? [])]),
      observability: appObservability(metrics, tracing),
      pageFields: modules.pageFields,
      mounts: modules.mounts,
      pageOrigins: modules.pageOrigins,
      oauthScopes: apiScopeWords(MODULES),
      translator: new Translator([HTTP_MESSAGES, ...MODULES.flatMap((m) => (m.declares?.[MESSAGES_KEY] ?? []) as Catalogs[])]),
      routeGroups: [...modules.routeGroups, ...(options.extraRouteGroups ?? [])],
    });
    // SHUTDOWN_DELAY: serving on, readiness 503, before the listener closes (docs/deployment.md)
    const drain = new ConnectionDrain(app.server, { delayMs: config.shutdownDelayMs });
    stops.add('http', () => closeApp(app, drain, config.shutdownTimeoutMs, log));
    await app.ready();
    modules.ready();
    const system: System = {
      config,
      logs,
      database,
      app,
      metrics,
      tracing,
      mail: servicesOf<{ mail: Mail }>(mailModule).mail,
      metricsUrl: servicesOf<ObservabilityServices>(observabilityModule).metricsUrl,
      services: servicesOf,
      async listen() {
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
        await stops.stopAll();
      },
    };
    return system;
  } catch (err) {
    log.error('system/start-failed', `Start-up failed: ${(err as Error).message}`, { class: (err as Error).constructor?.name });
    await stops.stopAll();
    throw err;
  }
}
