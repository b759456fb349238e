/**
 * Hears the changes other instances commit, so in-memory state (ended sessions, verified API
 * keys) follows the database without a query per request. A change runs `pg_notify(channel,
 * payload)` in its transaction; PostgreSQL delivers it when, and only if, it commits.
 *
 * One listener per instance, whatever the number of channels:
 * - PostgreSQL: a connection of its own (`DATABASE_LISTEN_URL`, past a transaction-mode pooler)
 *   that LISTENs on every subscriber's channel, reconnecting with backoff (0.1–5 s). Notifications
 *   sent while it was down are lost, so each subscriber catches up by reading the database: right
 *   after every (re)connection, every poll interval (250 ms) while disconnected, and every 30 s as
 *   a safety net against a silently dead socket. A catch-up still under way is not started again
 *   (while the database hangs, its statements wait for DATABASE_TIMEOUT): asked again meanwhile,
 *   it runs once more after it. Its failures are said once until it works again, and a failed
 *   one is tried again at the next tick.
 * - PGlite: one process, one session: LISTEN in process hears every change, the cascades of a
 *   deletion included; nothing can be missed, so nothing is polled.
 */
import pg from 'pg';
import type { Logger } from '../logging/logger.js';

/** `application_name` of the listening connection, to find it in `pg_stat_activity` */
export const LISTENER_APPLICATION_NAME = 'saas-listener';

/** while connected, subscribers still catch up this often (a socket can die silently) */
const SAFETY_POLL_MS = 30_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

/** Something kept in step with the database through one channel. */
export interface ChannelSubscriber {
  readonly channel: string;
  /** a notification on the channel, after the change that sent it committed */
  onNotification(payload: string): void;
  /**
   * Reads from the database what notifications may have been missed (PostgreSQL only). Handles
   * and logs its own failures; the listener calls it again at the next occasion.
   */
  catchUp(): Promise<void>;
  /**
   * false for a subscriber whose catch-up only wakes something that polls by itself (a job
   * worker): it catches up at reconnection and with the safety poll, not at every tick while
   * the connection is down (default true)
   */
  readonly catchUpWhileDisconnected?: boolean;
}

/** Where notifications come from: a connection URL, or PGlite's in-process LISTEN. */
export type NotificationSource =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; listen(channel: string, onPayload: (payload: string) => void): Promise<unknown> };

export interface DatabaseListenerOptions {
  source: NotificationSource;
  log: Logger;
  /**
   * how often subscribers catch up while the connection is down; default 250 ms, so that once the
   * database is back, what another instance ended is refused here within a second whether or not
   * LISTEN is back yet (its reconnection backs off up to 5 s)
   */
  pollIntervalMs?: number;
}

export class DatabaseListener {
  private readonly subscribers = new Map<string, ChannelSubscriber>();
  private readonly pollIntervalMs: number;
  private client: pg.Client | undefined;
  private listening = false;
  private started = false;
  private stopped = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private tickTimer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private readonly safetyPollTicks: number;
  /** channels whose catch-up is under way (true: asked again meanwhile), and those whose last one failed (said once) */
  private readonly catchingUp = new Map<string, boolean>();
  private readonly failing = new Set<string>();
  /** whether this loss of the connection was said (db/listener-lost) */
  private lostSaid = false;

  constructor(private readonly options: DatabaseListenerOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.safetyPollTicks = Math.max(1, Math.round(SAFETY_POLL_MS / this.pollIntervalMs));
  }

  /** Adds a subscriber; before {@link start}, which LISTENs on every channel at once. */
  subscribe(subscriber: ChannelSubscriber): void {
    if (this.started) throw new Error(`Subscribe to ${subscriber.channel} before the listener starts`);
    if (!CHANNEL_NAME.test(subscriber.channel)) throw new Error(`Channel names are plain identifiers: ${subscriber.channel}`);
    if (this.subscribers.has(subscriber.channel)) throw new Error(`Channel ${subscriber.channel} has a subscriber already`);
    this.subscribers.set(subscriber.channel, subscriber);
  }

  /** true while notifications arrive (always, once started, on PGlite) */
  get isListening(): boolean {
    return this.listening;
  }

  /** Starts listening; on PostgreSQL a failed connection is retried in the background (polling meanwhile). */
  async start(): Promise<void> {
    this.started = true;
    const { source } = this.options;
    if (source.kind === 'pglite') {
      for (const subscriber of this.subscribers.values()) {
        await source.listen(subscriber.channel, (payload) => this.deliver(subscriber, payload));
      }
      this.listening = true;
      return;
    }
    await this.connect(source.url);
    this.tickTimer = setInterval(() => this.tick(), this.pollIntervalMs);
    this.tickTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tickTimer);
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }

  private deliver(subscriber: ChannelSubscriber, payload: string): void {
    // an empty payload is a wake-up too (the job queues notify '' : look now)
    if (!this.stopped) subscriber.onNotification(payload);
  }

  private tick(): void {
    this.ticks++;
    const safety = this.ticks % this.safetyPollTicks === 0;
    // while down: every tick (those that poll by themselves with the safety poll only)
    if (!this.listening) this.catchUp(!safety);
    // while listening: the safety poll, and a catch-up that failed is tried again at the next tick
    else if (safety || this.failing.size > 0) this.catchUp();
  }

  /** `whileDisconnected`: a tick while the connection is down, which skips the subscribers that poll by themselves */
  private catchUp(whileDisconnected = false): void {
    for (const subscriber of this.subscribers.values()) {
      if (whileDisconnected && subscriber.catchUpWhileDisconnected === false) continue;
      this.catchUpOn(subscriber);
    }
  }

  /**
   * One catch-up of a channel at a time; asked again while one is under way, it runs once more
   * when that one ends: a read that began before LISTEN was back may have missed a change made
   * meanwhile, so the catch-up asked for at reconnection must start after it.
   */
  private catchUpOn(subscriber: ChannelSubscriber): void {
    const { channel } = subscriber;
    if (this.catchingUp.has(channel)) {
      this.catchingUp.set(channel, true);
      return;
    }
    this.catchingUp.set(channel, false);
    // a subscriber that throws at once fails like one that rejects
    Promise.resolve()
      .then(() => subscriber.catchUp())
      .then(
        () => {
          if (this.failing.delete(channel)) this.options.log.info('db/catch-up-recovered', `Catching up on ${channel} works again`);
        },
        (err: Error) => {
          if (this.failing.has(channel) || this.stopped) return;
          this.failing.add(channel);
          this.options.log.warn('db/catch-up-failed', `Catching up on ${channel} failed: ${err.message} (said once until it works again)`);
        },
      )
      .finally(() => {
        const again = this.catchingUp.get(channel);
        this.catchingUp.delete(channel);
        if (again && !this.stopped) this.catchUpOn(subscriber);
      });
  }

  private async connect(url: string): Promise<void> {
    const client = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME, keepAlive: true, connectionTimeoutMillis: 3000 });
    this.client = client;
    const lost = (reason: string) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = false;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (this.stopped) return;
      // once per loss: the reconnection attempts that fail meanwhile are not news
      if (!this.lostSaid) {
        this.lostSaid = true;
        this.options.log.warn(
          'db/listener-lost',
          `The database listener lost its connection (${reason}); catching up every ${this.pollIntervalMs} ms until it is back`,
          { channels: [...this.subscribers.keys()] },
        );
      }
      this.scheduleReconnect(url);
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      const subscriber = this.subscribers.get(message.channel);
      if (subscriber) this.deliver(subscriber, message.payload ?? '');
    });
    try {
      await client.connect();
      // channel names are checked identifiers (subscribe)
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      lost((err as Error).message);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.reconnectDelay = RECONNECT_MIN_MS;
    if (this.lostSaid) this.options.log.info('db/listener-back', "The database listener hears other instances' changes again");
    this.lostSaid = false;
    this.options.log.debug('db/listening', "Listening for other instances' changes", { channels: [...this.subscribers.keys()] });
    // whatever was sent while no one listened
    this.catchUp();
  }

  private scheduleReconnect(url: string): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.stopped) void this.connect(url);
    }, this.reconnectDelay);
    this.reconnectTimer.unref();
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
  }
}
