/**
 * Micro-benchmarks of the compiled code, in the bench's own process (full run): one log entry
 * with request context against pino, a filtered-out signal, buffered console output against a
 * write per line, the request context's cost to promises, the request metrics' bookkeeping
 * against prom-client's, and JSON, EDN and Transit on a 100-account list.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import pino from 'pino';
import type { Format } from '../src/shared/codecs.js';
import { timeOps } from './measure.js';

// the compiled modules (`npm run bench` builds first): production code, as `npm start` runs it
const compiled = <T>(path: string): Promise<T> => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
const { edn, json, transitJson } = await compiled<typeof import('../src/shared/codecs.js')>('shared/codecs.js');
const { runWithContext } = await compiled<typeof import('../src/logging/context.js')>('logging/context.js');
const { RotatingFileHandler } = await compiled<typeof import('../src/logging/file-handler.js')>('logging/file-handler.js');
const { LevelFilter, presetRules } = await compiled<typeof import('../src/logging/filter.js')>('logging/filter.js');
const { LogBackend } = await compiled<typeof import('../src/logging/logger.js')>('logging/logger.js');
const { createRedactor } = await compiled<typeof import('../src/logging/redact.js')>('logging/redact.js');
const { RequestMetrics } = await compiled<typeof import('../src/observability/request-metrics.js')>('observability/request-metrics.js');

const CTX = {
  'req-id': '3b6b1b5e-8c1d-4b7a-9d2e-1f0a2b3c4d5e',
  'request-method': 'get',
  uri: '/api/account/me',
  'server-name': 'localhost',
  params: { limit: 20 },
  user: { id: 'u1', email: 'a@b.c' },
};

export async function loggingMicro(dir: string) {
  const n = 100_000;
  const ours = new RotatingFileHandler({ path: join(dir, 'ours.json'), interval: 'daily', maxFileSize: 1e9, maxNumParts: 10, maxNumIntervals: 30 });
  const backend = new LogBackend(new LevelFilter(presetRules('prod')), [ours], createRedactor());
  const log = backend.logger('saas.bench');
  const dest = pino.destination({ dest: join(dir, 'pino.json'), sync: false, minLength: 4096 });
  const plain = pino({ level: 'info' }, dest);
  const oursNs = runWithContext(CTX, () => timeOps(n, (i) => log.info('bench/entry', 'GET /api/account/me => 200', { status: 200, i })));
  await backend.flush();
  const pinoNs = timeOps(n, (i) => plain.info({ status: 200, i }, 'GET /api/account/me => 200'));
  const pinoCtxNs = timeOps(n, (i) => plain.child(CTX).info({ status: 200, i }, 'GET /api/account/me => 200'));
  const filteredNs = timeOps(n * 10, (i) => log.debug('bench/debug', 'not written', { i }));
  const pinoFilteredNs = timeOps(n * 10, (i) => plain.debug({ i }, 'not written'));
  dest.flushSync();
  await backend.close();
  return {
    'ours-entry-with-context-ns': Math.round(oursNs),
    'pino-plain-call-ns': Math.round(pinoNs),
    'pino-child-with-context-ns': Math.round(pinoCtxNs),
    'ratio-ours-to-pino-plain': +(oursNs / pinoNs).toFixed(2),
    'ours-filtered-out-ns': +filteredNs.toFixed(1),
    'pino-filtered-out-ns': +pinoFilteredNs.toFixed(1),
  };
}

/**
 * One console JSON entry with request context to a file, each write synchronous (as Node writes
 * its standard output to a file or a pipe): buffered, as in prod, against a write per entry
 * (what it did before). The system call per entry is what the buffer saves.
 */
export async function consoleMicro(dir: string) {
  const { ConsoleHandler } = await compiled<typeof import('../src/logging/console-handler.js')>('logging/console-handler.js');
  const n = 50_000;
  const time = async (buffered: boolean) => {
    const fd = openSync(join(dir, 'console.jsonl'), 'w');
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        writeSync(fd, chunk);
        callback();
      },
    });
    const backend = new LogBackend(new LevelFilter(presetRules('prod')), [new ConsoleHandler('json', stream, { buffered })], createRedactor());
    const log = backend.logger('saas.bench');
    const ns = runWithContext(CTX, () => timeOps(n, (i) => log.info('bench/entry', 'GET /api/account/me => 200', { status: 200, i })));
    await backend.close();
    closeSync(fd);
    return ns;
  };
  const perEntry = await time(false);
  const buffered = await time(true);
  return { 'buffered-entry-ns': Math.round(buffered), 'write-per-entry-ns': Math.round(perEntry) };
}

/**
 * What the request context costs the promises of a request: a chain of 20 awaits (about one
 * database query through Kysely) with and without an AsyncLocalStorage store around it.
 */
export async function asyncContextMicro() {
  const storage = new AsyncLocalStorage<{ id: number }>();
  const chain = async () => {
    for (let i = 0; i < 20; i++) await null;
  };
  const time = async (withStore: boolean) => {
    const n = 20_000;
    let best = Infinity;
    for (let round = 0; round < 3; round++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await (withStore ? storage.run({ id: i }, chain) : chain());
      best = Math.min(best, Number(process.hrtime.bigint() - start) / n);
    }
    return best;
  };
  const without = await time(false);
  const withStore = await time(true);
  return {
    'twenty-awaits-us': +(without / 1000).toFixed(2),
    'twenty-awaits-in-a-context-us': +(withStore / 1000).toFixed(2),
    'context-cost-us': +((withStore - without) / 1000).toFixed(2),
  };
}

/** One request's bookkeeping with metrics on: ours (request-metrics.ts) against prom-client's labelled Counter and Histogram. */
export async function metricsMicro() {
  const { Counter, Histogram, Registry } = await import('prom-client');
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const routes = ['/api/health', '/api/account/me', '/api/cqrs/query', 'not-found'];
  const ours = new RequestMetrics(buckets);
  const registers = [new Registry()];
  const labelNames = ['method', 'route', 'status'];
  const counter = new Counter({ name: 'c', help: 'c', labelNames, registers });
  const histogram = new Histogram({ name: 'h', help: 'h', labelNames, buckets, registers });
  const n = 500_000;
  const oursNs = timeOps(n, (i) => ours.observe('GET', routes[i & 3], 200, 0.0004));
  const promNs = timeOps(n, (i) => {
    counter.labels('GET', routes[i & 3], '200').inc();
    histogram.labels('GET', routes[i & 3], '200').observe(0.0004);
  });
  return { 'request-metrics-ns': Math.round(oursNs), 'prom-client-counter-and-histogram-ns': Math.round(promNs) };
}

export function codecMicro() {
  const accounts = Array.from({ length: 100 }, (_, i) => ({
    id: `3b6b1b5e-8c1d-4b7a-9d2e-${String(i).padStart(12, '0')}`,
    email: `user${i}@example.com`,
    name: i % 3 ? `User ${i}` : null,
    'created-at': '2026-11-22T10:00:00.000Z',
    subscription: { status: 'active', plan: 'price_pro', 'current-period-end': null },
  }));
  const out: Record<string, unknown> = {};
  const base: Record<string, number> = {};
  for (const format of [json, edn, transitJson] as Format[]) {
    const text = format.encode(accounts);
    const encodeNs = timeOps(2000, () => format.encode(accounts));
    const decodeNs = timeOps(2000, () => format.decode(text));
    if (format === json) Object.assign(base, { encodeNs, decodeNs });
    out[format.name] = {
      'encode-us': +(encodeNs / 1000).toFixed(1),
      'decode-us': +(decodeNs / 1000).toFixed(1),
      bytes: text.length,
      'encode-ratio-to-json': +(encodeNs / base.encodeNs).toFixed(2),
      'decode-ratio-to-json': +(decodeNs / base.decodeNs).toFixed(2),
    };
  }
  return out;
}
