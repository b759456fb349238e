/**
 * Each request's log context and start time, given by the server factory before Fastify sees
 * the request (step 1 of the pipeline, src/http/pipeline.ts), so that the async context covers
 * the whole request: ours, libraries', timers and database callbacks all log with it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { runWithContext, type LogContext } from '../logging/context.js';
import { redactApiKeys } from '../logging/redact-links.js';
import type { RequestWrapper } from '../observability/http.js';

const CONTEXT = Symbol('saas.logContext');
const STARTED = Symbol('saas.startedAt');

type TrackedMessage = IncomingMessage & { [CONTEXT]?: LogContext; [STARTED]?: number };

function serverName(req: IncomingMessage): string {
  const host = req.headers.host ?? '';
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return (colon >= 0 ? host.slice(0, colon) : host) || 'localhost';
}

/** the method as the log context has it, without lower-casing a new string per request */
const LOWER_METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => [m, m.toLowerCase()]));

export interface ServerTimeouts {
  /** the whole request, headers and body, ms */
  requestTimeoutMs: number;
  /** the request headers, ms */
  headersTimeoutMs: number;
  /** an idle keep-alive connection, ms */
  keepAliveTimeoutMs: number;
  /** a socket with no activity at all, ms */
  idleTimeoutMs: number;
}

/**
 * The server factory. Fastify applies its timeouts only to servers it creates itself, so they
 * are applied here: a client that sends its headers or body slowly, or never finishes, is
 * dropped when its time is up, checked every second.
 */
export function contextServerFactory(timeouts: ServerTimeouts, around?: RequestWrapper) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void): Server => {
    const server = createServer(
      {
        requestTimeout: timeouts.requestTimeoutMs,
        headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
        keepAliveTimeout: timeouts.keepAliveTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      contextHandler(handler, around),
    );
    server.setTimeout(timeouts.idleTimeoutMs);
    return server;
  };
}

/**
 * Gives every request its log context before Fastify sees it, and runs the request inside that
 * context. `around`: the request span when tracing is on (src/observability/tracing.ts); off, one check.
 */
function contextHandler(handler: (req: IncomingMessage, res: ServerResponse) => void, around: RequestWrapper | undefined) {
  return (req: TrackedMessage, res: ServerResponse) => {
    const ctx: LogContext = {
      'req-id': randomUUID(),
      'request-method': LOWER_METHODS.get(req.method ?? 'GET') ?? (req.method ?? 'GET').toLowerCase(),
      // an API key pasted into a path must not reach the log with it
      uri: redactApiKeys(pathOf(req.url ?? '/')),
      'server-name': serverName(req),
    };
    req[CONTEXT] = ctx;
    // the monotonic clock in ms with sub-microsecond digits: a number, where hrtime.bigint() makes two BigInts per request
    req[STARTED] = performance.now();
    if (around) runWithContext(ctx, () => around(req, res, ctx, () => handler(req, res)));
    else runWithContext(ctx, () => handler(req, res));
  };
}

export function requestIdOf(req: IncomingMessage): string {
  return (req as TrackedMessage)[CONTEXT]?.['req-id'] ?? randomUUID();
}

/**
 * Starts the request's clock when the server factory did not (an in-process request: an MCP tool
 * call's route runs through `app.inject`), so its log entry's time is its own, not 0.
 */
export function startClockIfUntracked(req: IncomingMessage): void {
  const tracked = req as TrackedMessage;
  if (tracked[STARTED] === undefined) tracked[STARTED] = performance.now();
}

export function elapsedMs(req: IncomingMessage): number {
  const started = (req as TrackedMessage)[STARTED];
  return started === undefined ? 0 : performance.now() - started;
}

/** A request target without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q >= 0 ? url.slice(0, q) : url;
}

/** The log context the server factory gave the request (none for a request it did not see). */
export function contextOf(req: IncomingMessage): LogContext | undefined {
  return (req as TrackedMessage)[CONTEXT];
}
