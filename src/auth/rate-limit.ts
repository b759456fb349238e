/**
 * Log-in attempt limits per email and per client address. Counters live in memory for one
 * instance, or in Redis (REDIS_URL) so that every instance counts against the same limit.
 */
import type { Redis } from 'ioredis';
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitSetting } from '../config.js';
import { tooManyRequests } from '../http/errors.js';

export interface LoginLimits {
  email: RateLimitSetting | null;
  address: RateLimitSetting | null;
}

/** Where the counters live: Redis (all instances), the cluster's primary (its workers), or here. */
export type LimiterStore = { redis: Redis } | 'cluster' | 'memory';

function limiter(name: string, setting: RateLimitSetting | null, store: LimiterStore): RateLimiterAbstract | null {
  if (!setting) return null;
  const options = { keyPrefix: `login-${name}`, points: setting.count, duration: setting.seconds };
  if (store === 'memory') return new RateLimiterMemory(options);
  if (store === 'cluster') return new RateLimiterCluster({ ...options, timeoutMs: 3000 });
  return new RateLimiterRedis({ ...options, storeClient: store.redis, rejectIfRedisNotReady: true });
}

export class LoginRateLimiter {
  private readonly byEmail: RateLimiterAbstract | null;
  private readonly byAddress: RateLimiterAbstract | null;

  constructor(limits: LoginLimits, store: LimiterStore = 'memory') {
    this.byEmail = limiter('email', limits.email, store);
    this.byAddress = limiter('address', limits.address, store);
  }

  /** Counts one attempt; throws a 429 with Retry-After when a limit is exceeded. */
  async attempt(email: string, address: string): Promise<void> {
    for (const [limiter, key] of [[this.byAddress, address], [this.byEmail, email]] as const) {
      if (!limiter) continue;
      try {
        await limiter.consume(key);
      } catch (err) {
        if (err instanceof RateLimiterRes) throw tooManyRequests(err.msBeforeNext / 1000);
        throw err;
      }
    }
  }
}
