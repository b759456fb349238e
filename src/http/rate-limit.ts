/**
 * Attempt counters, the mechanism under every rate limit of the app: a fixed-window counter
 * per key in memory for one instance, in the cluster's primary for its workers, or in Redis
 * (REDIS_URL) so that every instance counts against the same limit. The limits themselves
 * (log-in, sign-up, second factor, ...) live with their features.
 */
import ipaddr from 'ipaddr.js';
import type { Redis } from 'ioredis';
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitSetting } from '../runtime/settings.js';
import { tooManyRequests } from './errors.js';

/**
 * Where the counters live: Redis (all instances), the cluster's primary (its workers), or here.
 * With Redis, `onFallback` hears each count taken in this instance because Redis did not answer.
 */
export type LimiterStore = { redis: Redis; onFallback?: () => void } | 'cluster' | 'memory';

/**
 * While Redis is gone its counters count in this instance (rate-limiter-flexible's insurance
 * limiter): a limit then holds per instance rather than failing every request it guards.
 */
class FallbackCounter extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly onFallback: (() => void) | undefined,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): ReturnType<RateLimiterMemory['consume']> {
    this.onFallback?.();
    return super.consume(...args);
  }
}

/** One counter per key with a fixed window; `null` when the setting turns it off. */
export function counter(keyPrefix: string, setting: RateLimitSetting | null, store: LimiterStore): RateLimiterAbstract | null {
  if (!setting) return null;
  const options = { keyPrefix, points: setting.count, duration: setting.seconds };
  if (store === 'memory') return new RateLimiterMemory(options);
  if (store === 'cluster') return new RateLimiterCluster({ ...options, timeoutMs: 3000 });
  return new RateLimiterRedis({
    ...options,
    storeClient: store.redis,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new FallbackCounter(options, store.onFallback),
  });
}

/**
 * The key a client address counts under. An IPv6 client is given a whole /64 (one customer's
 * network: any address in it is the client's to pick), so its per-address limits cover the
 * /64; an IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

/**
 * Takes one point from `key`; a 429 with Retry-After when the key has none left. Resolves to
 * the time the key's current window ends.
 */
export async function take(limiter: RateLimiterAbstract, key: string): Promise<number> {
  try {
    const res = await limiter.consume(key);
    return Date.now() + res.msBeforeNext;
  } catch (err) {
    if (err instanceof RateLimiterRes) throw tooManyRequests(err.msBeforeNext / 1000);
    throw err;
  }
}

/** What {@link LoginRateLimiter.begin} hands back: say how the attempt ended. */
export interface LoginAttempt {
  /** gives the attempt's points back: it did not fail (the password was right, or the check could not run) */
  refund(): Promise<void>;
}

/**
 * Takes one point from each counter (skipping a missing counter or key), in order: a 429 from
 * one gives back what the earlier ones took. The attempt counts as a failure unless refunded; a
 * point is given back only into the window it was taken from, since a refund landing after that
 * window ended would start the next one below zero (extra attempts).
 */
export async function takeFailurePoints(counters: ReadonlyArray<readonly [RateLimiterAbstract | null, string | undefined]>): Promise<LoginAttempt> {
  const taken: Array<[RateLimiterAbstract, string, number]> = [];
  const giveBack = () =>
    Promise.all(taken.filter(([, , windowEnd]) => Date.now() < windowEnd).map(([limiter, key]) => limiter.reward(key))).then(() => undefined);
  for (const [limiter, key] of counters) {
    if (!limiter || key === undefined) continue;
    try {
      taken.push([limiter, key, await take(limiter, key)]);
    } catch (err) {
      await giveBack();
      throw err;
    }
  }
  return { refund: giveBack };
}
