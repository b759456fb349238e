/**
 * Adapters that bring third-party logging into the one backend as `slf4j` signals:
 * Fastify's own logger (a pino-shaped interface) under `fastify`, and the database driver and
 * pool under `pg` and `pg-pool`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Level } from './levels.js';
import type { LogBackend, LogData, LoggingCall } from './logger.js';
import { sourceStack } from './source-positions.js';

function errorData(err: Error): LogData {
  return { class: err.constructor?.name ?? err.name, message: err.message, stack: typeof err.stack === 'string' ? sourceStack(err.stack) : err.stack };
}

/** Turns pino-style arguments (`obj, msg, ...args` or `msg, ...args`) into data and message. */
function pinoArgs(args: unknown[], bindings: LogData, childBindings: LogData | undefined): { data: LogData; msg: string } {
  let data: LogData = { ...bindings, ...childBindings };
  let rest = args;
  if (args[0] instanceof Error) {
    data = { ...data, err: errorData(args[0]) };
    rest = args.slice(1);
  } else if (args[0] !== null && typeof args[0] === 'object') {
    for (const [key, value] of Object.entries(args[0] as Record<string, unknown>)) {
      // the raw request/response objects are huge and carry headers; the request
      // context already identifies the request
      if (key === 'req' || key === 'res') continue;
      data[key] = value instanceof Error ? errorData(value) : value;
    }
    rest = args.slice(1);
  }
  const [first, ...params] = rest;
  let msg = typeof first === 'string' ? first : first === undefined ? '' : String(first);
  for (const p of params) msg = msg.replace(/%[sdjoO]/, typeof p === 'string' ? p : JSON.stringify(p));
  return { data, msg };
}

/**
 * A pino-compatible logger for Fastify whose output goes through the backend as `slf4j`.
 * Fastify makes a child per request, so a child is one small object; the methods live on the
 * prototype, and each names itself as the caller whose caller's line is recorded.
 */
class FastifyLogAdapter {
  level = 'trace';

  constructor(
    private readonly backend: LogBackend,
    private readonly ns: string,
    private readonly bindings: LogData,
    /** a request child's own bindings, merged only when it logs (most never do) */
    private readonly childBindings?: LogData,
  ) {}

  private log(level: Level, args: unknown[], caller: LoggingCall): void {
    if (!this.backend.enabled('slf4j', this.ns, level)) return;
    const { data, msg } = pinoArgs(args, this.bindings, this.childBindings);
    this.backend.emit('slf4j', this.ns, level, `${this.ns}/${level}`, msg, data, undefined, caller);
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args, FastifyLogAdapter.prototype.fatal);
  }
  error(...args: unknown[]): void {
    this.log('error', args, FastifyLogAdapter.prototype.error);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args, FastifyLogAdapter.prototype.warn);
  }
  info(...args: unknown[]): void {
    this.log('info', args, FastifyLogAdapter.prototype.info);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args, FastifyLogAdapter.prototype.debug);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args, FastifyLogAdapter.prototype.trace);
  }
  silent(): void {}

  child(childBindings: Record<string, unknown>): FastifyLogAdapter {
    return this.childBindings === undefined
      ? new FastifyLogAdapter(this.backend, this.ns, this.bindings, childBindings)
      : new FastifyLogAdapter(this.backend, this.ns, { ...this.bindings, ...this.childBindings }, childBindings);
  }
}

export function fastifyLogger(backend: LogBackend, ns = 'fastify', bindings: LogData = {}): FastifyBaseLogger {
  return new FastifyLogAdapter(backend, ns, bindings) as unknown as FastifyBaseLogger;
}
