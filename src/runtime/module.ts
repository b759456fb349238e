/**
 * The module contract (docs/architecture.md). A capability is one folder with one
 * `module.ts` exporting a {@link Module}: its settings (read from the environment and validated
 * by the module itself), and `start`, which builds its services from the shared infrastructure
 * and from the services of modules started before it, and hands back what it contributes to the
 * app (named schemas, route groups, query kinds, page fields) and how to stop.
 *
 * `system.ts` lists the modules in start order; they stop in reverse. A module reaches another
 * module's services only through `ctx.use(thatModule)`, typed by that module's declaration: a
 * dependency is an import of the module it needs, never a global (integrant's `ref`).
 */
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { TSchema } from 'typebox';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { DatabaseListener } from '../db/listener.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { Authenticator, Mount } from '../http/app.js';
import type { CsrfService } from '../http/csrf.js';
import type { QueryKind } from '../http/queries.js';
import type { LimiterStore } from '../http/rate-limit.js';
import type { PageOrigins } from '../http/security-headers.js';
import type { AccountGuard, RouteGroup, UsageGate } from '../http/routes.js';
import type { LogBackend } from '../logging/logger.js';
import type { Metrics, Tracing } from '../observability/index.js';
import type { Env } from './settings.js';

/** What every module is started with: the shared infrastructure, and the modules before it. */
export interface ModuleContext {
  config: Config;
  logs: LogBackend;
  database: Database;
  db: Kysely<DatabaseSchema>;
  /** present when REDIS_URL is set */
  redis: Redis | undefined;
  /** where rate-limit counters live: Redis, the cluster's primary, or this process */
  limiterStore: LimiterStore;
  /** one LISTEN connection for every channel: subscribe during `start` */
  listener: DatabaseListener;
  csrf: CsrfService;
  /** Prometheus metrics, when METRICS_PORT is set */
  metrics: Metrics | undefined;
  tracing: Tracing | undefined;
  /** this process is a cluster worker (WEB_CONCURRENCY > 1) */
  clusterWorker: boolean;
  /** cookies in the `Secure` mode of prod */
  secureCookies: boolean;
  /** when the system was built, epoch ms */
  startedAt: number;
  /** true from the moment the system began to stop */
  draining(): boolean;
  /** the services of a module started earlier; throws naming both when it was not */
  use<Services>(module: ModuleRef<Services>): Services;
  /** what the modules started so far contributed (the query endpoint reads every kind) */
  readonly contributed: Readonly<Contributions>;
  /**
   * What every module of the system declares under `key` (its `declares`), those started after
   * this one included: a module names things another reads when it starts (a module's webhook
   * event types, read by the webhooks module), without that module knowing it.
   */
  declared<T>(key: string): T[];
}

/** What a started module adds to the app. */
export interface Contributions {
  /** named schemas its routes reference; one that embeds another comes after it */
  schemas: TSchema[];
  routeGroups: RouteGroup[];
  queries: QueryKind[];
  /** hidden fields of the served page, by element id */
  pageFields: Record<string, string>;
  /** foreign HTTP applications at their own paths (the OAuth provider at `/oauth`) */
  mounts: Mount[];
  /** origins the client's page may reach beyond its own, for its Content-Security-Policy (the files' bucket) */
  pageOrigins: PageOrigins;
}

export interface Started<Services> extends Partial<Contributions> {
  services: Services;
  /** the JWT middleware's decision (one module provides it) */
  authenticator?: Authenticator;
  /** the account checks of `verifiedEmail` and `reauth` routes (one module provides it) */
  accountGuard?: AccountGuard;
  /** the usage gate of `limit` routes (one module provides it: billing) */
  usageGate?: UsageGate;
  /** called once every module started and the app is ready, before it listens: checks across modules, background warm-ups */
  ready?(app: Readonly<Contributions>): void;
  /** stops its background work; awaited in reverse start order, after the HTTP server drained */
  stop?(): Promise<void>;
}

/** A module as another one names it in `ctx.use`: whatever its settings, typed by its services. */
export interface ModuleRef<Services> {
  readonly name: string;
  start(ctx: ModuleContext, settings: never): Started<Services> | Promise<Started<Services>>;
}

export interface Module<Services = unknown, S = unknown> {
  /** the concern's folder name, used in logs and errors */
  readonly name: string;
  /** reads and validates the module's settings; throws ConfigError naming the variable */
  settings?(env: Env, config: Config): S;
  /** static facts other modules read with `ctx.declared(key)`, e.g. `{'webhooks/event-types': [...]}` */
  readonly declares?: Readonly<Record<string, readonly unknown[]>>;
  start(ctx: ModuleContext, settings: S): Started<Services> | Promise<Started<Services>>;
}

/** Declares a module; the types of its settings and services follow from `settings` and `start`. */
export function defineModule<Services, S = undefined>(module: Module<Services, S>): Module<Services, S> {
  return module;
}
