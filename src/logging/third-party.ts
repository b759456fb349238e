/**
 * Adapters that bring third-party logging into the one backend as `slf4j` signals:
 * Fastify's own logger (a pino-shaped interface) under `fastify`, and the database driver and
 * pool under `pg` and `pg-pool`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Level } from './levels.js';
import type { LogBackend, LogData } from './logger.js';

function errorData(err: Error): LogData {
  return { class: err.constructor?.name ?? err.name, message: err.message, stack: err.stack };
}

/** Turns pino-style arguments (`obj, msg, ...args` or `msg, ...args`) into data and message. */
function pinoArgs(args: unknown[], bindings: LogData): { data: LogData; msg: string } {
  let data: LogData = { ...bindings };
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

/** A pino-compatible logger for Fastify whose output goes through the backend as `slf4j`. */
export function fastifyLogger(backend: LogBackend, ns = 'fastify', bindings: LogData = {}): FastifyBaseLogger {
  const method = (level: Level) => {
    const fn = (...args: unknown[]): void => {
      if (!backend.enabled('slf4j', ns, level)) return;
      const { data, msg } = pinoArgs(args, bindings);
      backend.emit('slf4j', ns, level, `${ns}/${level}`, msg, data, undefined, fn);
    };
    return fn;
  };
  const logger = {
    level: 'trace',
    fatal: method('fatal'),
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    silent: () => undefined,
    child: (childBindings: Record<string, unknown>) => fastifyLogger(backend, ns, { ...bindings, ...childBindings }),
  };
  return logger as unknown as FastifyBaseLogger;
}
