/**
 * Redis (REDIS_URL), where every instance's rate-limit counters live. Redis going away is an
 * ordinary day (docs/deployment.md, "When a dependency fails"): counters fall back to this instance
 * (one warning `rate-limit/redis-unavailable`, `saas_rate_limit_fallback_total` counting each count
 * taken here), ioredis reconnects by itself, and when Redis is back one line says so. Its
 * connection errors are said once per outage, not at every reconnection attempt.
 */
import { Redis } from 'ioredis';
import type { LimiterStore } from '../http/rate-limit.js';
import type { LogBackend } from '../logging/logger.js';
import type { Metrics } from '../observability/index.js';

/** the longest wait between reconnection attempts, ms */
const RECONNECT_MAX_MS = 2_000;

export interface RedisConnection {
  redis: Redis;
  limiterStore: LimiterStore;
  stop(): Promise<void>;
}

export async function connectRedis(url: string, logs: LogBackend, metrics: Metrics | undefined): Promise<RedisConnection> {
  const log = logs.logger('saas.rate-limit');
  const driverLog = logs.logger('ioredis', 'slf4j');
  const fallbacks = metrics?.counter('saas_rate_limit_fallback_total', 'Rate-limit counts taken in this instance because Redis did not answer', []);
  const redis = new Redis(url, {
    lazyConnect: true,
    // a command fails at once while Redis is away (the counters fall back), never waits in a queue
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 100, RECONNECT_MAX_MS),
  });
  let unavailableSince: number | undefined;
  let fallbackCount = 0;
  const unavailable = (reason: string) => {
    if (unavailableSince !== undefined) return;
    unavailableSince = Date.now();
    fallbackCount = 0;
    log.warn('rate-limit/redis-unavailable', `Redis is not answering (${reason}): rate limits count in this instance until it is back`);
  };
  redis.on('error', (err: Error) => {
    // said once per outage: ioredis reports every failed reconnection attempt
    if (unavailableSince === undefined) driverLog.warn('ioredis/error', err.message);
    unavailable(err.message);
  });
  redis.on('close', () => unavailable('connection closed'));
  redis.on('ready', () => {
    if (unavailableSince === undefined) return;
    const seconds = Math.round((Date.now() - unavailableSince) / 1000);
    unavailableSince = undefined;
    log.info('rate-limit/redis-back', `Redis answers again after ${seconds} s: rate limits count in Redis again`, { seconds, 'counted-here': fallbackCount });
  });
  try {
    await redis.connect();
  } catch (err) {
    // not a reason to refuse to start: ioredis keeps trying, the counters fall back meanwhile
    unavailable((err as Error).message);
  }
  return {
    redis,
    limiterStore: {
      redis,
      onFallback: () => {
        fallbackCount++;
        fallbacks?.inc();
        if (unavailableSince === undefined) unavailable('a command failed');
      },
    },
    async stop() {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}
