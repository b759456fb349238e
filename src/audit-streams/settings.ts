/**
 * The audit log streams' settings (docs/audit.md, "Streams"): AUDIT_STREAM_RETRY_SCHEDULE,
 * AUDIT_STREAM_PAUSE_AFTER and the worker's pace. A stream's requests share the webhooks'
 * sender, so WEBHOOK_TIMEOUT, WEBHOOK_ALLOW_PRIVATE and WEBHOOK_DNS_SERVERS apply to them too.
 */
import { ConfigError, int, rateLimit, type Env, type RateLimitSetting } from '../runtime/settings.js';
import { parseRetrySchedule } from '../webhooks/settings.js';

export interface AuditStreamSettings {
  /** the delay before each retry of a failing batch, ms; its last delay repeats until the stream pauses */
  retryScheduleMs: number[];
  /** a stream whose batches all failed for this long pauses, ms */
  pauseAfterMs: number;
  /** how often the worker looks for due streams besides the commit notifications, ms */
  pollMs: number;
  /** how long a claimed stream belongs to the instance sending its batch, ms */
  leaseMs: number;
  /** streams sent to at once per instance */
  concurrency: number;
  /** test events per organization; null: unlimited */
  testLimit: RateLimitSetting | null;
}

/** 5 s, 30 s, 2 min, 5 min, 15 min, 30 min, then hourly until the stream pauses. */
export const DEFAULT_STREAM_RETRY_SCHEDULE = '5,30,120,300,900,1800,3600';

export function auditStreamSettings(env: Env): AuditStreamSettings {
  const timeoutMs = int(env, 'WEBHOOK_TIMEOUT', 10, 1, 300) * 1000;
  // a batch's send takes at most WEBHOOK_TIMEOUT; the rest of the lease covers forming and recording it
  const leaseMs = int(env, 'AUDIT_STREAM_LEASE_MS', timeoutMs + 60_000, 100, 3_600_000);
  if (leaseMs <= timeoutMs) throw new ConfigError('AUDIT_STREAM_LEASE_MS', `must be longer than WEBHOOK_TIMEOUT (${timeoutMs} ms), got ${leaseMs}`);
  return {
    retryScheduleMs: parseRetrySchedule(env.AUDIT_STREAM_RETRY_SCHEDULE, 'AUDIT_STREAM_RETRY_SCHEDULE', DEFAULT_STREAM_RETRY_SCHEDULE),
    pauseAfterMs: int(env, 'AUDIT_STREAM_PAUSE_AFTER', 86_400, 1, 30 * 86_400) * 1000,
    pollMs: int(env, 'AUDIT_STREAM_POLL_MS', 1000, 10, 3_600_000),
    leaseMs,
    concurrency: int(env, 'AUDIT_STREAM_CONCURRENCY', 4, 1, 100),
    testLimit: rateLimit(env, 'AUDIT_STREAM_TEST_LIMIT', { count: 10, seconds: 60 }),
  };
}
