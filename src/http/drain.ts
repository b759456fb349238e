/**
 * Graceful drain of an HTTP server: stop accepting, answer every request already accepted or
 * arriving on an open connection (with `Connection: close`), close connections once they are
 * idle, and cut what is left at a deadline.
 *
 * Node's `server.close()` (and Fastify's `close()`, which calls it) destroys every connection
 * that has no request parsed yet — including connections accepted a moment ago whose request
 * is still on its way — so under load a few clients see ECONNRESET at every shutdown. The drain
 * closes only the listening socket and tracks connections itself.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logging/logger.js';

/**
 * How long a connection that has no request in flight may stay open once the drain begins,
 * counted from when it was accepted or its last response ended: a client that connected or
 * read its response just before the signal gets this long to send its request (answered, with
 * `Connection: close`); a connection idle for longer is closed at once.
 */
export const IDLE_GRACE_MS = 1000;

/** Once the drain begins, the listener closes when no connection has come for this long... */
export const QUIET_MS = 100;
/** ...or this long after the drain began, while connections keep coming. */
export const MAX_ACCEPT_MS = 5000;

interface Connection {
  /** responses not yet finished on this connection */
  inFlight: number;
  /** the newest of them: responses on a connection go out in order, so it is the last to go */
  newest: ServerResponse | undefined;
  /** the 'close' listener of its responses: one per connection, none made per request */
  onResponseClose: (this: ServerResponse) => void;
  /** when it was accepted or its last response ended (ms) */
  idleSince: number;
  /** bytes read by then: more means a request is on its way (not yet a 'request' event) */
  bytesAtIdle: number;
}

export interface DrainResult {
  /** connections still open at the deadline, destroyed */
  cut: number;
  /** of those, connections with a request in flight */
  cutInFlight: number;
}

export class ConnectionDrain {
  readonly #server: Server;
  readonly #idleGraceMs: number;
  readonly #delayMs: number;
  readonly #connections = new Map<Socket, Connection>();
  #draining = false;
  #sweepTimer: NodeJS.Timeout | undefined;
  #onEmpty: (() => void) | undefined;
  /** connections accepted so far, and when the last one was (ms) */
  #accepted = 0;
  #lastAcceptAt = 0;

  /**
   * `delayMs` (SHUTDOWN_DELAY): how long the drain keeps serving, listener open, before it
   * starts closing: a load balancer or Kubernetes takes a few seconds to see readiness turn 503
   * and stop sending, and connections it sent meanwhile must find a listener.
   */
  constructor(server: Server, options: { idleGraceMs?: number; delayMs?: number } = {}) {
    this.#server = server;
    this.#idleGraceMs = options.idleGraceMs ?? IDLE_GRACE_MS;
    this.#delayMs = options.delayMs ?? 0;
    server.on('connection', (socket: Socket) => {
      const drain = this;
      const connection: Connection = {
        inFlight: 0,
        newest: undefined,
        idleSince: Date.now(),
        bytesAtIdle: 0,
        onResponseClose(this: ServerResponse) {
          connection.inFlight--;
          if (connection.newest === this) connection.newest = undefined;
          connection.idleSince = Date.now();
          connection.bytesAtIdle = socket.bytesRead;
          if (drain.#draining) drain.#sweep();
        },
      };
      this.#connections.set(socket, connection);
      this.#accepted++;
      this.#lastAcceptAt = Date.now();
      socket.once('close', () => {
        this.#connections.delete(socket);
        if (this.#connections.size === 0) this.#onEmpty?.();
      });
    });
    // before the app's handler, so a request arriving during the drain is answered with
    // `Connection: close` whatever the handler does
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const connection = this.#connections.get(req.socket);
      if (this.#draining) res.shouldKeepAlive = false;
      if (!connection) return;
      // a counter and a listener made once per connection: this runs for every request
      connection.inFlight++;
      connection.newest = res;
      res.on('close', connection.onResponseClose);
    });
  }

  /** true from the moment `drain()` is called */
  get draining(): boolean {
    return this.#draining;
  }

  /** open connections, and how many of them have a request in flight */
  get open(): { connections: number; inFlight: number } {
    let inFlight = 0;
    for (const c of this.#connections.values()) if (c.inFlight > 0) inFlight++;
    return { connections: this.#connections.size, inFlight };
  }

  /**
   * After the delay, stops accepting and resolves once every connection has closed, or at
   * `deadlineMs` (counted after the delay), when what is left is destroyed and counted. During
   * the delay everything is served as usual, each answer with `Connection: close`, so keep-alive
   * clients reconnect (through the load balancer, to another instance).
   */
  async drain(deadlineMs: number): Promise<DrainResult> {
    this.#draining = true;
    // the newest response closes its connection: the ones before it go out first, in order
    for (const { newest } of this.#connections.values()) if (newest && !newest.headersSent) newest.shouldKeepAlive = false;
    if (this.#delayMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, this.#delayMs));
    await this.#closeListener(Math.min(MAX_ACCEPT_MS, deadlineMs / 2));

    let deadline: NodeJS.Timeout | undefined;
    try {
      return await new Promise<DrainResult>((resolve) => {
        const empty = () => resolve({ cut: 0, cutInFlight: 0 });
        this.#onEmpty = empty;
        deadline = setTimeout(() => {
          const { connections, inFlight } = this.open;
          for (const socket of this.#connections.keys()) socket.destroy();
          resolve({ cut: connections, cutInFlight: inFlight });
        }, deadlineMs);
        if (this.#connections.size === 0) empty();
        else this.#sweep();
      });
    } finally {
      clearTimeout(deadline);
      clearTimeout(this.#sweepTimer);
      this.#onEmpty = undefined;
    }
  }

  /**
   * Closing a listening socket resets the connections still in the kernel's accept queue (or,
   * in a cluster, on their way from the primary to a worker): their clients saw the connection
   * open and sent a request. So the listener stays open, accepting and answering with
   * `Connection: close`, until no connection has come for `QUIET_MS` — the load balancer has
   * seen readiness turn 503 and sends no more — and a last loop turn has accepted what was
   * queued; `maxMs` after the drain began at the latest.
   */
  async #closeListener(maxMs: number): Promise<void> {
    const until = Date.now() + maxMs;
    for (;;) {
      const wait = Math.min(this.#lastAcceptAt + QUIET_MS, until) - Date.now();
      if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
      const before = this.#accepted;
      // a poll phase runs before the check phase: what is queued is accepted first
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#accepted === before || Date.now() >= until) break;
    }
    // only the listening socket: http.Server's close() would also destroy connections
    // whose request has not arrived yet
    if (this.#server.listening) NetServer.prototype.close.call(this.#server);
  }

  /** closes the connections idle for the grace period; comes back for the others when theirs ends */
  #sweep(): void {
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    const now = Date.now();
    let next = Infinity;
    const silent: Array<[Socket, Connection]> = [];
    for (const [socket, connection] of this.#connections) {
      if (socket.destroyed || connection.inFlight > 0) continue;
      const closeAt = connection.idleSince + this.#idleGraceMs;
      // part of a request has come: it is answered (the deadline and the headers time-out bound it)
      if (socket.bytesRead > connection.bytesAtIdle) next = Math.min(next, Math.max(closeAt, now + this.#idleGraceMs));
      else if (closeAt <= now) silent.push([socket, connection]);
      else next = Math.min(next, closeAt);
    }
    if (silent.length > 0) {
      // after a poll phase: a request already in the socket's buffer (the loop may have been
      // busy) is read first, and its connection is no longer silent
      setImmediate(() => {
        for (const [socket, connection] of silent) {
          if (connection.inFlight === 0 && socket.bytesRead === connection.bytesAtIdle) socket.destroy();
        }
        if (this.#draining) this.#sweep();
      });
    }
    if (next !== Infinity) this.#sweepTimer = setTimeout(() => this.#sweep(), next - now);
  }
}

/**
 * Drains the app's HTTP server, then closes the app (its onClose hooks). What is still open
 * after `timeoutMs` is cut and logged with a count.
 */
export async function closeApp(app: FastifyInstance, drain: ConnectionDrain, timeoutMs: number, log: Logger): Promise<void> {
  const { cut, cutInFlight } = await drain.drain(timeoutMs);
  if (cut > 0) {
    log.warn('system/shutdown-deadline', `SHUTDOWN_TIMEOUT (${timeoutMs} ms) reached: cut ${cut} connections, ${cutInFlight} with a request in flight`, {
      cut,
      'cut-in-flight': cutInFlight,
      'timeout-ms': timeoutMs,
    });
  } else {
    log.info('system/drained', 'Every connection answered and closed');
  }
  await app.close();
}
