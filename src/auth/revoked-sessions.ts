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
 *   revoking statement commits (immediate; on PGlite, one process, this is all there is);
 * - other instances (PostgreSQL): the revoking statement runs `pg_notify('session_revoked',
 *   <family id>)`, delivered when it commits, to a dedicated LISTEN connection here;
 * - missed notifications (the listener's connection dropped, or a silently dead socket): while
 *   the listener is down the database is polled every second for families revoked since the
 *   last poll, once right after it reconnects, and every 30 seconds as a safety net.
 * - a start (or restart) loads every family revoked within the last access-token lifetime.
 */
import { sql } from 'kysely';
import pg from 'pg';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { SessionRevocationCheck } from './access-tokens.js';

export const REVOCATION_CHANNEL = 'session_revoked';
/** `application_name` of the listening connection, to find it in `pg_stat_activity` */
export const LISTENER_APPLICATION_NAME = 'saas-session-listener';

// a refresh that read its family just before the revocation committed issues one more access
// token; it and clock skew between instances and the database stay well inside this margin
const MARGIN_MS = 60_000;
// polls look back this far: a revocation's timestamp is taken before its commit
const LOOKBACK_MS = 10_000;
const SAFETY_POLL_TICKS = 30;
const PRUNE_TICKS = 60;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface RevokedSessionsOptions {
  db: DB;
  /** access-token lifetime, seconds */
  accessTtl: number;
  log: Logger;
  /** PostgreSQL: listen for other instances' revocations on a connection of its own; absent on PGlite */
  listenUrl?: string;
  /** poll interval while the listener is down; default 1000 ms */
  pollIntervalMs?: number;
}

interface RevokedRow {
  now: Date;
  id: string | null;
  revoked_at: Date | null;
}

export class RevokedSessions implements SessionRevocationCheck {
  // session id -> epoch ms after which no access token of it can be valid
  private readonly until = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly pollIntervalMs: number;
  private listener: pg.Client | undefined;
  private listening = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private ticks = 0;
  /** database time from which the next poll looks for revocations */
  private since: Date | undefined;
  private polling: Promise<void> | undefined;
  private pollFailing = false;
  private stopped = false;

  constructor(private readonly options: RevokedSessionsOptions) {
    this.ttlMs = options.accessTtl * 1000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
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

  /** true while the LISTEN connection is up (always false on PGlite) */
  get isListening(): boolean {
    return this.listening;
  }

  /** Loads the recent revocations; on PostgreSQL starts listening. */
  async start(): Promise<void> {
    await this.poll();
    if (this.options.listenUrl) await this.connectListener();
    this.tickTimer = setInterval(() => this.tick(), this.pollIntervalMs);
    this.tickTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tickTimer);
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    this.listening = false;
    await this.polling;
    await listener?.end().catch(() => undefined);
  }

  private tick(): void {
    this.ticks++;
    if (this.ticks % PRUNE_TICKS === 0) this.prune();
    if (!this.options.listenUrl) return;
    if (!this.listening || this.ticks % SAFETY_POLL_TICKS === 0) void this.poll();
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
  }

  /** Reads the families revoked since the last poll (the first reads the last access-token lifetime). */
  private poll(): Promise<void> {
    this.polling ??= this.readRevocations().finally(() => { this.polling = undefined; });
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
        left join refresh_family f
          on f.revoked_at > coalesce(${this.since ?? null}::timestamptz, n.now - ${windowSeconds}::int * interval '1 second')`
        .execute(this.options.db);
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

  private async connectListener(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.listenUrl,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 3000,
    });
    this.listener = client;
    const lost = (reason: string) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = false;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.options.log.warn('auth/revocation-listener-lost', `The session revocation listener lost its connection (${reason}); polling every ${this.pollIntervalMs} ms until it is back`);
      this.scheduleReconnect();
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload) this.markRevoked([message.payload]);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
    } catch (err) {
      lost((err as Error).message);
      return;
    }
    if (this.listener !== client) return;
    this.listening = true;
    this.reconnectDelay = RECONNECT_MIN_MS;
    this.options.log.debug('auth/revocation-listener', 'Listening for ended sessions', { channel: REVOCATION_CHANNEL });
    // whatever was revoked while no one listened
    await this.poll();
  }

  private scheduleReconnect(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.stopped) void this.connectListener();
    }, this.reconnectDelay);
    this.reconnectTimer.unref();
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
  }
}
