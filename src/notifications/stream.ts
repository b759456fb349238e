/**
 * The live stream (docs/notifications.md, "Live"): `GET /api/notifications/stream`, a mount, since
 * it is an answer that stays open. `text/event-stream`, the access token in `Authorization` (the
 * client reads it with `fetch`): `event: notification` (its `id:` the cursor) and
 * `event: unread-count`; a comment every 25 s; `Last-Event-ID` sends what came after it.
 *
 * A notification written on any instance wakes every instance (PostgreSQL NOTIFY from the table's
 * trigger; PGlite alike on one process), whose streams of that account read what came after their
 * cursor: the table is the truth, a lost wake-up is made up by the next one or a reconnect. A
 * stream ends within a second when its session ends (log-out, revocation, lock: the revoked
 * sessions every instance hears), when its token expires (the client reconnects with a fresh one),
 * and when the process starts draining, so a shutdown never waits for it. At most
 * NOTIFICATION_STREAMS_PER_ACCOUNT at once across instances (leased rows), the next 429.
 */
import type { Say } from '../http/app.js';
import { phrase } from '../i18n/messages.js';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import type { AccessTokens } from '../auth/access-tokens.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { Notification } from './schemas.js';
import type { NotificationService } from './service.js';

export const STREAM_PATH = '/api/notifications/stream';
export const STREAM_SCOPE = 'notifications:read';
const TICK_MS = 1000;
const HEARTBEAT_TICKS = 25;
const LEASE_S = 60;

export interface StreamDeps {
  db: DB;
  tokens: AccessTokens;
  isRevoked(sessionId: string): boolean;
  notifications: NotificationService;
  log: Logger;
  perAccount: number;
  /** `APP_URL/api`: an OAuth token must be for it */
  apiResource: string;
  headers: Record<string, string>;
  draining(): boolean;
}

interface OpenStream {
  id: string;
  accountId: string;
  sessionId: string;
  res: ServerResponse;
  cursor: string;
  /** the access token's expiry, ms */
  expiresAt: number;
  ticks: number;
  ended: boolean;
}

const event = (name: string, data: unknown, id?: string) => `${id ? `id: ${id}\n` : ''}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

export class NotificationStreams {
  private readonly byAccount = new Map<string, Set<OpenStream>>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly deps: StreamDeps) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** How many streams this instance holds open. */
  get size(): number {
    let n = 0;
    for (const set of this.byAccount.values()) n += set.size;
    return n;
  }

  private refuse(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
    res.statusCode = status;
    for (const [name, value] of Object.entries({ ...this.deps.headers, 'content-type': 'application/json; charset=utf-8', ...headers }))
      res.setHeader(name, value);
    res.end(JSON.stringify(body));
  }

  /** `say`: its refusals in the request's language (the account's, once its token is read) */
  handle(req: IncomingMessage, res: ServerResponse, say: Say): void {
    this.open(req, res, say).catch((err: Error) => {
      this.deps.log.warn('notifications/stream-failed', `A notification stream could not open: ${err.message}`);
      if (!res.headersSent)
        this.refuse(res, 503, { type: 'service-unavailable', message: say('Notifications are unavailable; try again shortly') }, { 'retry-after': '5' });
      else res.destroy();
    });
  }

  private async open(req: IncomingMessage, res: ServerResponse, say: Say): Promise<void> {
    if (req.method !== 'GET') return this.refuse(res, 405, { type: 'method-not-allowed', message: say('The stream is read with GET') }, { allow: 'GET' });
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const challenge = { 'www-authenticate': 'Bearer' };
    if (!m) return this.refuse(res, 401, { type: 'unauthorized', message: say('Authentication required') }, challenge);
    const verified = await this.deps.tokens.verify(m[1]!);
    if (!verified.ok)
      return this.refuse(res, 401, { type: 'unauthorized', message: say(verified.reason) }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    const { user } = verified;
    if (user.oauth && (user.oauth.resource !== this.deps.apiResource || !user.oauth.scopes.includes(STREAM_SCOPE)))
      return this.refuse(res, 403, {
        type: 'insufficient-scope',
        message: say(phrase('The stream needs the scope {scope}', { scope: STREAM_SCOPE }), user.locale),
        scopes: [STREAM_SCOPE],
      });
    const expiresAt = (decodeJwt(m[1]!).exp ?? 0) * 1000;
    const id = randomUUID();
    // the cap holds across instances: the count and the new lease under the account's lock
    const leased = await this.deps.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`saas:streams:${user.id}`}, 0))`.execute(trx);
      const live = await trx
        .selectFrom('notification_stream')
        .select(sql<string>`count(*)`.as('n'))
        .where('account_id', '=', user.id)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirstOrThrow();
      if (Number(live.n) >= this.deps.perAccount) return false;
      await trx
        .insertInto('notification_stream')
        .values({ id, account_id: user.id, expires_at: sql<Date>`now() + make_interval(secs => ${LEASE_S})` as never })
        .execute();
      return true;
    });
    if (!leased)
      return this.refuse(
        res,
        429,
        { type: 'too-many-requests', message: say(phrase('At most {max} notification streams at once', { max: this.deps.perAccount }), user.locale) },
        { 'retry-after': '30' },
      );
    const lastEventId = String(req.headers['last-event-id'] ?? '');
    const cursor = /^\d{1,19}$/.test(lastEventId) ? lastEventId : await this.deps.notifications.latestCursor(user.id);
    res.statusCode = 200;
    for (const [name, value] of Object.entries(this.deps.headers)) res.setHeader(name, value);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    const stream: OpenStream = {
      id,
      accountId: user.id,
      sessionId: user.sessionId,
      res,
      cursor,
      expiresAt,
      ticks: 0,
      ended: false,
    };
    const set = this.byAccount.get(user.id) ?? new Set();
    set.add(stream);
    this.byAccount.set(user.id, set);
    const close = () => this.forget(stream);
    req.on('close', close);
    res.on('close', close);
    res.write(': connected\n\n');
    await this.readAccount(user.id);
  }

  /** accounts whose streams are being read, and those asked again meanwhile */
  private readonly reading = new Set<string>();
  private readonly again = new Set<string>();

  /**
   * Sends each of the account's streams what came after its cursor, then the unread count: one
   * read for all of them (a person's tabs share their cursor), concurrent wake-ups coalesced.
   */
  private async readAccount(accountId: string): Promise<void> {
    if (this.reading.has(accountId)) {
      this.again.add(accountId);
      return;
    }
    this.reading.add(accountId);
    try {
      do {
        this.again.delete(accountId);
        const streams = [...(this.byAccount.get(accountId) ?? [])];
        if (streams.length === 0) return;
        const from = streams.reduce((min, st) => (BigInt(st.cursor) < BigInt(min) ? st.cursor : min), streams[0]!.cursor);
        const [found, unread]: [Notification[], number] = await Promise.all([
          this.deps.notifications.after(accountId, from),
          this.deps.notifications.unreadCount(accountId),
        ]);
        const count = event('unread-count', { 'unread-count': unread });
        for (const stream of streams) {
          if (stream.ended) continue;
          for (const n of found)
            if (BigInt(n.cursor) > BigInt(stream.cursor)) {
              stream.res.write(event('notification', n, n.cursor));
              stream.cursor = n.cursor;
            }
          stream.res.write(count);
        }
      } while (this.again.has(accountId));
    } catch (err) {
      this.deps.log.warn('notifications/stream-read-failed', `A notification stream could not read: ${(err as Error).message}`);
    } finally {
      this.reading.delete(accountId);
    }
  }

  /** A notification of the account was written (on this instance or another). */
  wake(accountId: string): void {
    if (this.byAccount.has(accountId)) void this.readAccount(accountId);
  }

  /** Every stream reads (a reconnect of the listener: what was missed while it was away). */
  wakeAll(): void {
    for (const accountId of this.byAccount.keys()) this.wake(accountId);
  }

  private end(stream: OpenStream, reason: string): void {
    if (stream.ended) return;
    stream.res.write(event('end', { reason }));
    stream.res.end();
    this.forget(stream);
  }

  private forget(stream: OpenStream): void {
    if (stream.ended) return;
    stream.ended = true;
    const set = this.byAccount.get(stream.accountId);
    set?.delete(stream);
    if (set?.size === 0) this.byAccount.delete(stream.accountId);
    void this.deps.db
      .deleteFrom('notification_stream')
      .where('id', '=', stream.id)
      .execute()
      .catch(() => undefined);
  }

  /** Every second: ends streams whose session ended or token expired (or all, draining); heartbeats and lease renewals every 25 s. */
  private tick(): void {
    const draining = this.deps.draining();
    const now = Date.now();
    const renew: string[] = [];
    for (const set of this.byAccount.values())
      for (const stream of [...set]) {
        if (draining) this.end(stream, 'shutting-down');
        else if (this.deps.isRevoked(stream.sessionId)) this.end(stream, 'session-ended');
        else if (now >= stream.expiresAt) this.end(stream, 'token-expired');
        else if (++stream.ticks % HEARTBEAT_TICKS === 0) {
          stream.res.write(': heartbeat\n\n');
          renew.push(stream.id);
        }
      }
    if (renew.length > 0)
      void this.deps.db
        .updateTable('notification_stream')
        .set({ expires_at: sql<Date>`now() + make_interval(secs => ${LEASE_S})` as never })
        .where('id', 'in', renew)
        .execute()
        .catch(() => undefined);
  }

  /** Ends every stream (the module's stop). */
  close(): void {
    clearInterval(this.timer);
    for (const set of this.byAccount.values()) for (const stream of [...set]) this.end(stream, 'shutting-down');
  }
}
