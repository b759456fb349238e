/**
 * The sessions (refresh families) that ended recently, in memory, so the JWT check refuses
 * their access tokens with one Map lookup instead of a database query per request.
 *
 * An entry lives as long as an access token of its session can: the revocation time plus the
 * access-token lifetime (plus a margin for clock skew and a refresh racing the revocation).
 * After that every token of the session has expired anyway, and the entry is pruned.
 *
 * How every instance learns of a revocation:
 * - this process: {@link RevokedSessions.markRevoked}, called by RefreshTokens after its
 *   revoking statement commits (immediate);
 * - other instances (PostgreSQL): the revoking statement runs `pg_notify('session_revoked',
 *   <family id>)`, delivered when it commits, through the instance's database listener
 *   (src/db/listener.ts), which also has this catch up on what it may have missed (families
 *   revoked since the last read) while its connection is down, after it reconnects, and every
 *   30 seconds;
 * - a start (or restart) loads every family revoked within the last access-token lifetime.
 *
 * An OAuth grant (src/oauth/) is a session too: its access tokens carry its id as `sid`, and
 * ending it (a connected app revoked, its app deleted, a refresh token reused) notifies the same
 * channel; the reads below take `oauth_grant.revoked_at` with `refresh_family.revoked_at`.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { ChannelSubscriber, DatabaseListener } from '../db/listener.js';
import type { Logger } from '../logging/logger.js';
import type { SessionRevocationCheck } from './access-tokens.js';

export const REVOCATION_CHANNEL = 'session_revoked';

// a refresh that read its family just before the revocation committed issues one more access
// token; it and clock skew between instances and the database stay well inside this margin
const MARGIN_MS = 60_000;
// reads look back this far: a revocation's timestamp is taken before its commit
const LOOKBACK_MS = 10_000;
const PRUNE_EVERY_MS = 60_000;

export interface RevokedSessionsOptions {
  db: DB;
  /** access-token lifetime, seconds */
  accessTtl: number;
  log: Logger;
  /** hears the revocations of other instances; absent, only this process's own are known */
  listener?: DatabaseListener;
}

interface RevokedRow {
  now: Date;
  id: string | null;
  revoked_at: Date | null;
}

export class RevokedSessions implements SessionRevocationCheck, ChannelSubscriber {
  readonly channel = REVOCATION_CHANNEL;
  // session id -> epoch ms after which no access token of it can be valid
  private readonly until = new Map<string, number>();
  private readonly ttlMs: number;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** database time from which the next read looks for revocations */
  private since: Date | undefined;
  private polling: Promise<void> | undefined;
  private pollFailing = false;
  private stopped = false;

  constructor(private readonly options: RevokedSessionsOptions) {
    this.ttlMs = options.accessTtl * 1000;
    options.listener?.subscribe(this);
  }

  /** True when the session has ended and its tokens may still be unexpired. */
  isRevoked(sessionId: string): boolean {
    const until = this.until.get(sessionId);
    return until !== undefined && until > Date.now();
  }

  /** Records sessions ended now (by this process, after its commit, or heard from another). */
  markRevoked(sessionIds: Iterable<string>): void {
    const until = Date.now() + this.ttlMs + MARGIN_MS;
    for (const id of sessionIds) this.until.set(id, Math.max(until, this.until.get(id) ?? 0));
  }

  /** number of sessions held (for tests and diagnostics) */
  get size(): number {
    return this.until.size;
  }

  /** A session ended on another instance (its id, from the listener). */
  onNotification(sessionId: string): void {
    this.markRevoked([sessionId]);
  }

  /** What the listener may have missed: the families revoked since the last read. */
  catchUp(): Promise<void> {
    return this.poll();
  }

  /** Loads the recent revocations; start the listener after. */
  async start(): Promise<void> {
    await this.poll();
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pruneTimer);
    await this.polling;
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
  }

  /** Reads the families revoked since the last poll (the first reads the last access-token lifetime). */
  private poll(): Promise<void> {
    this.polling ??= this.readRevocations().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async readRevocations(): Promise<void> {
    const first = this.since === undefined;
    const windowSeconds = Math.ceil((this.ttlMs + MARGIN_MS) / 1000);
    try {
      // one row even when nothing was revoked, to carry the database's clock for the next poll
      const { rows } = await sql<RevokedRow>`
        select n.now, f.id, f.revoked_at
        from (select now() as now) n
        left join (
          select id::text as id, revoked_at from refresh_family where revoked_at is not null
          union all
          select id, revoked_at from oauth_grant where revoked_at is not null
        ) f
          on f.revoked_at > coalesce(${this.since ?? null}::timestamptz, n.now - ${windowSeconds}::int * interval '1 second')`.execute(this.options.db);
      const now = Date.now();
      for (const row of rows) {
        if (!row.id || !row.revoked_at) continue;
        // the database's clock: an entry may live a little longer than needed, never shorter
        const until = Math.max(row.revoked_at.getTime(), now) + this.ttlMs + MARGIN_MS;
        this.until.set(row.id, Math.max(until, this.until.get(row.id) ?? 0));
      }
      if (rows[0]) this.since = new Date(rows[0].now.getTime() - LOOKBACK_MS);
      if (this.pollFailing) this.options.log.info('auth/revocation-poll-recovered', 'Reading ended sessions works again');
      this.pollFailing = false;
    } catch (err) {
      if (this.stopped) return;
      if (first) throw err;
      if (!this.pollFailing) this.options.log.warn('auth/revocation-poll-failed', `Reading ended sessions failed: ${(err as Error).message}`);
      this.pollFailing = true;
    }
  }
}
