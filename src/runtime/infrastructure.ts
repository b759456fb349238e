/**
 * The infrastructure every module is started on: logging, tracing, the database, metrics,
 * Redis, the LISTEN connection, the CSRF secret and where rate-limit counters live. Each piece
 * registers how it stops on {@link Stops}, so a failure half-way through start-up stops what
 * had started, in reverse.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { DatabaseListener } from '../db/listener.js';
import { CsrfService } from '../http/csrf.js';
import type { LimiterStore } from '../http/rate-limit.js';
import { createLogging, type LoggingOptions } from '../logging/index.js';
import type { LogBackend, Logger } from '../logging/logger.js';
import type { Redactor } from '../logging/redact.js';
import { createMetrics, startTracing, type Metrics, type Tracing } from '../observability/index.js';
import type { RedisConnection } from './redis.js';

/** What to stop, in reverse order of registration; each failure is logged and the rest still stop. */
export class Stops {
  private readonly steps: Array<[string, () => Promise<void>]> = [];

  constructor(private readonly log: () => Logger | undefined) {}

  add(name: string, stop: () => Promise<void>): void {
    this.steps.push([name, stop]);
  }

  async stopAll(): Promise<void> {
    for (const [name, stop] of this.steps.reverse()) {
      try {
        await stop();
      } catch (err) {
        if (name !== 'logging') this.log()?.error('system/stop-failed', `Stopping ${name} failed: ${(err as Error).message}`);
      }
    }
    this.steps.length = 0;
  }
}

export interface Infrastructure {
  logs: LogBackend;
  redact: Redactor;
  tracing: Tracing | undefined;
  database: Database;
  metrics: Metrics | undefined;
  redis: Redis | undefined;
  limiterStore: LimiterStore;
  listener: DatabaseListener;
  csrf: CsrfService;
}

export interface InfrastructureOptions extends LoggingOptions {
  /** this process is a cluster worker (WEB_CONCURRENCY > 1) */
  clusterWorker?: boolean;
  /** where an in-memory database starts from (src/db/database.ts `memoryImage`) */
  memoryDatabaseImage?: Blob;
}

/** Logging first (its stop is the last), then the rest; `stops` learns each piece as it starts. */
export function startLogging(config: Config, options: InfrastructureOptions, stops: Stops): { logs: LogBackend; redact: Redactor } {
  const { backend: logs, redact } = createLogging(config, options);
  stops.add('logging', () => logs.close());
  return { logs, redact };
}

export async function startInfrastructure(
  config: Config,
  options: InfrastructureOptions,
  stops: Stops,
  { logs, redact }: { logs: LogBackend; redact: Redactor },
): Promise<Infrastructure> {
  // stopped last but logging, so the spans of the shutdown are exported
  const tracing = await startTracing(config);
  if (tracing) stops.add('tracing', () => tracing.shutdown());
  const database = await openDatabase(config, logs, { aroundQuery: tracing?.aroundQuery, memoryImage: options.memoryDatabaseImage });
  stops.add('database', () => database.close());
  const metrics = await createMetrics(config, database, () => logs.droppedEntries());
  if (metrics && options.clusterWorker) metrics.shareWithClusterPrimary();

  let redis: RedisConnection | undefined;
  if (config.redisUrl) {
    // ioredis (~12–20 MB resident) is loaded only when there is a Redis to connect to
    const { connectRedis } = await import('./redis.js');
    redis = await connectRedis(config.redisUrl, logs, metrics);
    stops.add('redis', redis.stop);
  }
  return {
    logs,
    redact,
    tracing,
    database,
    metrics,
    redis: redis?.redis,
    limiterStore: redis?.limiterStore ?? (options.clusterWorker ? 'cluster' : 'memory'),
    // other instances' changes to what this one keeps in memory: one LISTEN connection for all channels
    listener: new DatabaseListener({ source: database.notifications, log: logs.logger('saas.db') }),
    csrf: new CsrfService(config.sessionSecret),
  };
}
