/**
 * The webhooks module's settings (docs/webhooks.md, "Settings"): WEBHOOK_TIMEOUT,
 * WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER, WEBHOOK_ALLOW_PRIVATE, and the
 * worker's pace and resolver.
 */
import { isIP } from 'node:net';
import { ConfigError, int, list, rateLimit, type Env, type RateLimitSetting } from '../runtime/settings.js';

export interface WebhookSettings {
  /** an attempt's whole budget (connect, send, status, the first 4 KiB of the body), ms */
  timeoutMs: number;
  /** the delay before each retry, ms, counted from the failure of the attempt before it */
  retryScheduleMs: number[];
  /** an endpoint whose attempts all failed for this long is disabled, ms */
  disableAfterMs: number;
  /** loopback, private and unique-local addresses may be reached (never link-local) */
  allowPrivate: boolean;
  /** endpoint URLs must be https (prod) */
  requireHttps: boolean;
  /** `ip[:port]` of DNS servers to resolve endpoint hosts with; empty: the system's resolver */
  dnsServers: string[];
  /** how often the worker looks for due deliveries besides the commit notifications, ms */
  pollMs: number;
  /** how long a claimed delivery belongs to the instance attempting it, ms (longer than the timeout) */
  leaseMs: number;
  /** deliveries attempted at once per instance */
  concurrency: number;
  /** attempts in flight at once for one organization, across instances (its endpoints' share) */
  orgConcurrency: number;
  /** manual sends (`test`, `retry`) per organization; null: unlimited */
  manualLimit: RateLimitSetting | null;
}

/** Standard Webhooks' reference schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,36000';
const MAX_DELAY_SECONDS = 7 * 86400;

function seconds(name: string, raw: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must list seconds (numbers such as 5 or 0.5), got "${raw}"`);
  const n = Number(raw);
  if (n > MAX_DELAY_SECONDS) throw new ConfigError(name, `must not hold a delay above ${MAX_DELAY_SECONDS} s (7 days), got ${raw}`);
  return Math.round(n * 1000);
}

/** A retry schedule setting (seconds, comma-separated) in ms; `name` and `fallback` for other schedules than the webhooks' (the audit log's streams). */
export function parseRetrySchedule(raw: string | undefined, name = 'WEBHOOK_RETRY_SCHEDULE', fallback = DEFAULT_RETRY_SCHEDULE): number[] {
  const value = raw === undefined || raw.trim() === '' ? fallback : raw;
  const items = value.split(',').map((s) => s.trim());
  if (items.length > 30) throw new ConfigError(name, `must list at most 30 delays, got ${items.length}`);
  return items.map((item) => seconds(name, item));
}

function bool(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

function dnsServers(env: Env): string[] {
  const servers = list(env.WEBHOOK_DNS_SERVERS);
  for (const server of servers) {
    const m = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(server);
    const ip = m && (isIP(m[1]) ? m[1] : isIP(server) ? server : '');
    if (!ip) throw new ConfigError('WEBHOOK_DNS_SERVERS', `must list IP addresses (with an optional :port), got "${server}"`);
  }
  return servers;
}

export function webhookSettings(env: Env, prod: boolean): WebhookSettings {
  const timeoutMs = int(env, 'WEBHOOK_TIMEOUT', 10, 1, 300) * 1000;
  const leaseMs = int(env, 'WEBHOOK_LEASE_MS', timeoutMs + 30_000, 100, 3_600_000);
  if (leaseMs <= timeoutMs) throw new ConfigError('WEBHOOK_LEASE_MS', `must be longer than WEBHOOK_TIMEOUT (${timeoutMs} ms), got ${leaseMs}`);
  return {
    timeoutMs,
    retryScheduleMs: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER', 432_000, 1, 365 * 86400) * 1000,
    allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE'),
    requireHttps: prod,
    dnsServers: dnsServers(env),
    pollMs: int(env, 'WEBHOOK_POLL_MS', 1000, 10, 3_600_000),
    leaseMs,
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 10, 1, 200),
    orgConcurrency: int(env, 'WEBHOOK_ORG_CONCURRENCY', 3, 1, 200),
    manualLimit: rateLimit(env, 'WEBHOOK_MANUAL_LIMIT', { count: 30, seconds: 60 }),
  };
}
