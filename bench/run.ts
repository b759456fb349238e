/**
 * `npm run bench`: everything compared runs in this one run on this machine, and the report
 * gives ratios (machines are noisy; ratios from one run are what mean something).
 *
 *  1. micro: one log entry with request context vs a plain pino call; a filtered-out signal;
 *     encoding and decoding a 100-account list in JSON, EDN and Transit; with PostgreSQL, the
 *     database path alone (bench/db-path.ts)
 *  2. HTTP, each server in its own process on this process's Node (24), loaded by autocannon
 *     from another process with the same connections and duration: raw node:http, bare Fastify
 *     (no logger; default pino logger to a file), bare Express 5, and this project in prod
 *     configuration (file logging, compression, JWT middleware) on PostgreSQL when
 *     BENCH_DATABASE_URL is set, on PGlite, and on PGlite with logging off. All servers run for
 *     the whole run and are loaded in turn, round after round; medians over the rounds
 *     Observability: four more copies of the PGlite server loaded on /api/health only, with
 *     metrics and tracing both off (twice: the second copy is the noise floor, what two
 *     identical servers differ by here), with METRICS_PORT on, and with tracing on (every
 *     request sampled, exported to a local receiver that discards it)
 *  3. this project: /api/account/me and the query endpoint in JSON and Transit each round;
 *     then log-in and the latency of /api/health while log-ins run flat out; RSS per server;
 *     the server's CPU time per request (from /proc, Linux), the steadiest figure on a noisy
 *     machine
 *
 * BENCH_DURATION (seconds per measurement, default 5), BENCH_CONNECTIONS (default 50),
 * BENCH_ROUNDS (default 3); BENCH_ONLY=fastify-bare,postgres runs only those servers' rounds
 * (no micro-benchmarks), for a quick A/B while working.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { Format } from '../src/shared/codecs.js';

// the compiled modules (`npm run bench` builds first): production code, as `npm start` runs it
const compiled = <T>(path: string): Promise<T> => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
const { edn, json, transitJson } = await compiled<typeof import('../src/shared/codecs.js')>('shared/codecs.js');
const { runWithContext } = await compiled<typeof import('../src/logging/context.js')>('logging/context.js');
const { RotatingFileHandler } = await compiled<typeof import('../src/logging/file-handler.js')>('logging/file-handler.js');
const { LevelFilter, presetRules } = await compiled<typeof import('../src/logging/filter.js')>('logging/filter.js');
const { LogBackend } = await compiled<typeof import('../src/logging/logger.js')>('logging/logger.js');
const { createRedactor } = await compiled<typeof import('../src/logging/redact.js')>('logging/redact.js');
const { RequestMetrics } = await compiled<typeof import('../src/observability/request-metrics.js')>('observability/request-metrics.js');

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = process.env.BENCH_ONLY?.split(',');
const dir = await mkdtemp(join(tmpdir(), 'saas-bench-'));
const results: Record<string, unknown> = { machine: { cpus: (await import('node:os')).cpus().length, node: process.version }, duration: DURATION, connections: CONNECTIONS };

function timeOps(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / n; // ns per op
}

// ---- 1. micro-benchmarks ------------------------------------------------------------------

async function loggingMicro() {
  const n = 100_000;
  const ctx = { 'req-id': '3b6b1b5e-8c1d-4b7a-9d2e-1f0a2b3c4d5e', 'request-method': 'get', uri: '/api/account/me', 'server-name': 'localhost', params: { limit: 20 }, user: { id: 'u1', email: 'a@b.c' } };
  const ours = new RotatingFileHandler({ path: join(dir, 'ours.json'), interval: 'daily', maxFileSize: 1e9, maxNumParts: 10, maxNumIntervals: 30 });
  const backend = new LogBackend(new LevelFilter(presetRules('prod')), [ours], createRedactor());
  const log = backend.logger('saas.bench');
  const dest = pino.destination({ dest: join(dir, 'pino.json'), sync: false, minLength: 4096 });
  const plain = pino({ level: 'info' }, dest);
  const oursNs = runWithContext(ctx, () => timeOps(n, (i) => log.info('bench/entry', 'GET /api/account/me => 200', { status: 200, i })));
  await backend.flush();
  const pinoNs = timeOps(n, (i) => plain.info({ status: 200, i }, 'GET /api/account/me => 200'));
  const pinoCtxNs = timeOps(n, (i) => plain.child(ctx).info({ status: 200, i }, 'GET /api/account/me => 200'));
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
 * What the request context costs the promises of a request now: a chain of 20 awaits (about
 * one database query through Kysely) with and without an AsyncLocalStorage store around it.
 * Node 20 tracked every promise with promise hooks once a store was in use; Node 24 keeps the
 * context in AsyncContextFrame instead.
 */
async function asyncContextMicro() {
  const storage = new AsyncLocalStorage<{ id: number }>();
  const chain = async () => { for (let i = 0; i < 20; i++) await null; };
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
  return { 'twenty-awaits-us': +(without / 1000).toFixed(2), 'twenty-awaits-in-a-context-us': +(withStore / 1000).toFixed(2), 'context-cost-us': +((withStore - without) / 1000).toFixed(2) };
}

/** One request's bookkeeping with metrics on: ours (request-metrics.ts) against prom-client's labelled Counter and Histogram. */
async function metricsMicro() {
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

function codecMicro() {
  const accounts = Array.from({ length: 100 }, (_, i) => ({
    id: `3b6b1b5e-8c1d-4b7a-9d2e-${String(i).padStart(12, '0')}`, email: `user${i}@example.com`, name: i % 3 ? `User ${i}` : null,
    'created-at': '2026-11-22T10:00:00.000Z', subscription: { status: 'active', plan: 'price_pro', 'current-period-end': null },
  }));
  const out: Record<string, unknown> = {};
  const base: Record<string, number> = {};
  for (const format of [json, edn, transitJson] as Format[]) {
    const text = format.encode(accounts);
    const encodeNs = timeOps(2000, () => format.encode(accounts));
    const decodeNs = timeOps(2000, () => format.decode(text));
    if (format === json) Object.assign(base, { encodeNs, decodeNs });
    out[format.name] = {
      'encode-us': +(encodeNs / 1000).toFixed(1), 'decode-us': +(decodeNs / 1000).toFixed(1), bytes: text.length,
      'encode-ratio-to-json': +(encodeNs / base.encodeNs).toFixed(2), 'decode-ratio-to-json': +(decodeNs / base.decodeNs).toFixed(2),
    };
  }
  return out;
}

// ---- 2. servers and load --------------------------------------------------------------------

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

// the project runs with the node flags of `npm start`, read from package.json so they cannot drift
const startScript = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
const START_FLAGS = /node ((?:--\S+ )*)dist\/server\.js/.exec(startScript)?.[1].trim().split(' ').filter(Boolean);
if (!START_FLAGS) throw new Error(`bench: cannot find "node [flags] dist/server.js" in the start script: ${startScript}`);

// every server runs on this process's own node binary (npm scripts put node_modules/.bin/node,
// Node 24, first on PATH); its version is asked of that binary and reported
const serverNode = execFileSync(process.execPath, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
if (Number(/^v(\d+)/.exec(serverNode)?.[1]) < 24) throw new Error(`bench: the servers would run on Node ${serverNode}; run it as \`npm run bench\` (Node 24)`);
(results.machine as Record<string, unknown>)['server-node'] = serverNode;

interface Running { url: string; child: ChildProcess; stop(): Promise<void> }

async function startServer(script: string, env: Record<string, string>, extraFlags: string[] = []): Promise<Running> {
  const port = await freePort();
  // the project runs as `npm start` runs it: compiled, with the same node flags
  const args = script.startsWith('dist/') ? [...START_FLAGS!, ...extraFlags, script] : ['--import', 'tsx', script];
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch { /* not up yet */ }
    await sleep(100);
  }
  return {
    url, child,
    stop: () => new Promise((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); }),
  };
}

async function procStatusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): Promise<number | null> {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** the CPU time (user + system) a process has used so far, µs; null off Linux */
async function cpuUs(pid: number | undefined): Promise<number | null> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 1e6 / 100; // clock ticks of 1/100 s
  } catch {
    return null;
  }
}

interface Load { rps: number; p50: number; p99: number; non2xx: number; errors: number; 'server-cpu-us-per-request'?: number | null }
interface LoadOptions { method?: string; headers?: Record<string, string>; body?: string; connections?: number; duration?: number; pid?: number; warmUp?: boolean }

/** Loads `url` from an autocannon process; with `pid`, also the server's CPU per request. */
async function load(url: string, options: LoadOptions = {}): Promise<Load> {
  const request = ['-c', String(options.connections ?? CONNECTIONS), '-m', options.method ?? 'GET'];
  for (const [k, v] of Object.entries(options.headers ?? {})) request.push('-H', `${k}=${v}`);
  if (options.body) request.push('-b', options.body);
  request.push(url);
  const autocannon = join('node_modules', '.bin', 'autocannon');
  // one second first, not counted: the JIT and the connection pool warm up for every server alike
  if (options.warmUp !== false) await new Promise((resolve) => spawn(autocannon, ['-d', '1', ...request], { stdio: 'ignore' }).on('exit', resolve));
  const cpuBefore = options.pid ? await cpuUs(options.pid) : null;
  const child = spawn(autocannon, ['-j', '-d', String(options.duration ?? DURATION), ...request], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  await new Promise((resolve) => child.on('exit', resolve));
  const cpuAfter = options.pid ? await cpuUs(options.pid) : null;
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  const result: Load = { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
  if (cpuBefore !== null && cpuAfter !== null && r.requests.total > 0) result['server-cpu-us-per-request'] = Math.round((cpuAfter - cpuBefore) / r.requests.total);
  return result;
}

function projectEnv(databaseUrl: string): Record<string, string> {
  return {
    APP_ENV: 'prod', JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnop', DATABASE_URL: databaseUrl, MAIL_URL: 'smtp://127.0.0.1:2525',
    LOG_FILE: join(dir, `saas-app-${Math.random().toString(36).slice(2)}.json`), LOG_CONSOLE: 'off',
    LOGIN_LIMIT_EMAIL: '0', LOGIN_LIMIT_ADDRESS: '0', PUBLIC_DIR: join(dir, 'public'),
  };
}

/** one server under test and the loads measured on it every round */
interface Subject {
  key: string;
  label: string;
  server: Running;
  loads: Array<{ key: string; label: string; path: string; options: LoadOptions }>;
  /** the project's account, for the log-in measurements after the rounds */
  account?: { email: string; password: string };
}

const health = { key: 'health', label: 'GET /api/health', path: '/api/health', options: {} };

async function peer(key: string, label: string, script: string, env: Record<string, string> = {}, extraFlags: string[] = []): Promise<Subject> {
  return { key, label, server: await startServer(script, env, extraFlags), loads: [health] };
}

/**
 * CPU time a server spent in frames `inside` matches, from V8's sampling profiler (`--cpu-prof`):
 * matched samples times the sampling interval. Measured inside the one process, so a noisy
 * neighbour cannot add to it the way it adds to a difference between two servers.
 */
async function profiledCpuUs(profileDir: string, inside: (url: string) => boolean): Promise<{ us: number; samples: number } | null> {
  const { readdir } = await import('node:fs/promises');
  const file = (await readdir(profileDir).catch(() => [])).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return null;
  const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { url: string } }>; samples: number[]; timeDeltas: number[];
  };
  const urls = new Map(profile.nodes.map((n) => [n.id, n.callFrame.url]));
  let us = 0;
  let samples = 0;
  // each sample stands for the time since the one before it
  profile.samples.forEach((id, i) => {
    if (inside(urls.get(id) ?? '')) {
      us += profile.timeDeltas[i] ?? 0;
      samples++;
    }
  });
  return { us, samples };
}

async function project(key: string, label: string, databaseUrl: string): Promise<Subject> {
  const server = await startServer('dist/server.js', projectEnv(databaseUrl));
  const email = `bench-${Date.now()}@example.com`;
  const password = 'bench password 123';
  await fetch(`${server.url}/api/account/sign-up`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const login = await (await fetch(`${server.url}/api/account/log-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).json() as { 'access-token': string };
  const auth = { authorization: `Bearer ${login['access-token']}` };
  const loads: Subject['loads'] = [health];
  for (const format of [json, transitJson]) {
    loads.push({ key: `me-${format.name}`, label: `GET /me (${format.name})`, path: '/api/account/me', options: { headers: { ...auth, accept: format.mime } } });
    loads.push({
      key: `query-${format.name}`, label: `query account/me (${format.name})`, path: '/api/cqrs/query',
      options: { method: 'POST', headers: { ...auth, accept: format.mime, 'content-type': format.mime }, body: format.encode({ 'query/kind': 'account/me' }) },
    });
  }
  return { key, label, server, loads, account: { email, password } };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** the median of each figure over the rounds, and the per-round CPU figures beside it */
function summarize(samples: Load[]): Load & { rounds: number; 'cpu-per-round': Array<number | null | undefined> } {
  const pick = (f: (l: Load) => number) => median(samples.map(f));
  const cpu = samples.map((l) => l['server-cpu-us-per-request']).filter((x): x is number => typeof x === 'number');
  return {
    rps: pick((l) => l.rps), p50: pick((l) => l.p50), p99: pick((l) => l.p99),
    non2xx: samples.reduce((n, l) => n + l.non2xx, 0), errors: samples.reduce((n, l) => n + l.errors, 0),
    'server-cpu-us-per-request': cpu.length ? median(cpu) : null,
    rounds: samples.length, 'cpu-per-round': samples.map((l) => l['server-cpu-us-per-request']),
  };
}

/** one table row: requests/s, latency, the server's CPU per request, and anything extra */
function report(label: string, r: Load, extra = ''): void {
  const cpu = r['server-cpu-us-per-request'] ? `  cpu ${r['server-cpu-us-per-request']} µs/req` : '';
  const failures = r.non2xx || r.errors ? `  (non-2xx ${r.non2xx}, errors ${r.errors})` : '';
  console.log(`  ${label.padEnd(44)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${cpu}${extra}${failures}`);
}

// ---- 3. the run -----------------------------------------------------------------------------

console.log(`servers on Node ${serverNode} (bench on ${process.version}), ${(results.machine as { cpus: number }).cpus} cores`);
const pgUrl = process.env.BENCH_DATABASE_URL;
if (!ONLY) {
  console.log('micro-benchmarks');
  results.logging = await loggingMicro();
  console.log(' ', results.logging);
  results.codecs = codecMicro();
  console.log(' ', JSON.stringify(results.codecs));
  results['async-context'] = await asyncContextMicro();
  console.log('  request context and promises:', results['async-context']);
  results['metrics-per-request'] = await metricsMicro();
  console.log('  metrics bookkeeping per request:', results['metrics-per-request']);
}
if (pgUrl && !ONLY) {
  const { dbPath } = await import('./db-path.js');
  results['db-path'] = await dbPath(pgUrl, { rounds: 3, total: 8000 });
  console.log('  database path alone (this process, 50 queries in flight):', results['db-path']);
}

// Every server is started once and loaded in turn, round after round (a b c d e, a b c d e, ...),
// so that a slow minute of a shared machine lands on all of them alike; medians are reported.
const starts: Array<[string, () => Promise<Subject>]> = [
  ['node-http', () => peer('node-http', '(a) node:http', 'bench/servers/node-http.ts')],
  ['fastify-bare', () => peer('fastify-bare', '(b) Fastify, no logger', 'bench/servers/fastify.ts')],
  ['fastify-pino-file', () => peer('fastify-pino-file', '(c) Fastify + pino to a file', 'bench/servers/fastify.ts', { LOG_TO: join(dir, 'fastify.log') })],
  ['express', () => peer('express', '(d) Express 5', 'bench/servers/express.ts')],
  ...(pgUrl ? [['postgres', () => project('postgres', 'postgres', pgUrl)] as [string, () => Promise<Subject>]] : []),
  ['pglite', () => project('pglite', 'pglite', 'memory://')],
  // the same server with logging off: no file, no console, every signal filtered out
  ['pglite-logging-off', () => peer('pglite-logging-off', 'pglite, logging off', 'dist/server.js', { ...projectEnv('memory://'), LOG_FILE: 'off', LOG_CONSOLE: 'off', LOG_LEVELS: '*=fatal' })],
];
// observability's cost: the same PGlite server four times, loaded on /api/health only
const otlpSink = createHttpServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')); });
await new Promise<void>((resolve) => otlpSink.listen(0, '127.0.0.1', resolve));
const otlpUrl = `http://127.0.0.1:${(otlpSink.address() as { port: number }).port}`;
const profiledMetricsPort = await freePort();
starts.push(
  ['obs-off', () => peer('obs-off', 'pglite, metrics and tracing off', 'dist/server.js', projectEnv('memory://'))],
  ['obs-off-again', () => peer('obs-off-again', 'pglite, off again (noise floor)', 'dist/server.js', projectEnv('memory://'))],
  ['obs-metrics', async () => peer('obs-metrics', 'pglite, metrics on', 'dist/server.js', { ...projectEnv('memory://'), METRICS_PORT: String(await freePort()) })],
  ['obs-tracing', () => peer('obs-tracing', 'pglite, tracing on (all sampled)', 'dist/server.js', { ...projectEnv('memory://'), OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl })],
  // a fifth copy with metrics on under V8's profiler: the CPU its metrics code takes per request
  ['obs-metrics-profiled', async () => peer('obs-metrics-profiled', 'pglite, metrics on, profiled', 'dist/server.js',
    { ...projectEnv('memory://'), METRICS_PORT: String(profiledMetricsPort) }, ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'metrics-profile')}`])],
);
/** frames of the metrics code: ours, prom-client, and Node's performance observers (prom-client's GC metric) */
const isMetricsFrame = (url: string) => url.includes('/dist/observability/') || url.includes('/node_modules/prom-client/') || url.startsWith('node:internal/perf/');
const subjects: Subject[] = [];
for (const [key, start] of starts) if (!ONLY || ONLY.includes(key)) subjects.push(await start());
const samples = new Map<string, Load[]>();
console.log(`HTTP (${CONNECTIONS} connections, ${DURATION} s each, ${ROUNDS} interleaved rounds)`);
for (let round = 0; round < ROUNDS; round++) {
  for (const s of subjects) {
    for (const l of s.loads) {
      const r = await load(`${s.server.url}${l.path}`, { ...l.options, pid: s.server.child.pid, warmUp: round === 0 });
      const key = `${s.key} ${l.key}`;
      samples.set(key, [...(samples.get(key) ?? []), r]);
      report(`r${round + 1} ${s.label} ${l.label}`, r);
    }
  }
}

const byServer: Record<string, Record<string, unknown>> = {};
console.log('medians');
for (const s of subjects) {
  const out: Record<string, unknown> = {};
  for (const l of s.loads) {
    out[l.key] = summarize(samples.get(`${s.key} ${l.key}`)!);
    report(`${s.label} ${l.label}`, out[l.key] as Load);
  }
  out['rss-after-load-mb'] = await procStatusMb(s.server.child.pid, 'VmRSS');
  byServer[s.key] = out;
}

// log-in (argon2id) and health latency while log-ins run flat out: once per project server
for (const s of subjects.filter((x) => x.account)) {
  const out = byServer[s.key];
  const { email, password } = s.account!;
  for (const format of [json, transitJson]) {
    out[`log-in-${format.name}`] = await load(`${s.server.url}/api/account/log-in`, { method: 'POST', headers: { accept: format.mime, 'content-type': format.mime }, body: format.encode({ email, password }), connections: 20, pid: s.server.child.pid });
    report(`${s.label} POST /log-in (${format.name})`, out[`log-in-${format.name}`] as Load);
  }
  // the event loop must keep answering while argon2 runs flat out on the thread pool
  const flood = load(`${s.server.url}/api/account/log-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }), connections: 40, warmUp: false });
  await sleep(500);
  out['health-during-log-in-flood'] = await load(`${s.server.url}/api/health`, { connections: 5, duration: Math.max(2, DURATION - 1), warmUp: false });
  await flood;
  report(`${s.label} health during log-in flood`, out['health-during-log-in-flood'] as Load);
}
// the profiled server counts its own requests (warm-ups included): the divisor of its metrics CPU
let profiledRequests: number | null = null;
if (byServer['obs-metrics-profiled']) {
  const text = await (await fetch(`http://127.0.0.1:${profiledMetricsPort}/metrics`)).text();
  profiledRequests = text.split('\n').filter((line) => line.startsWith('http_requests_total{')).reduce((n, line) => n + Number(line.split(' ').pop()), 0);
}
for (const s of subjects) {
  byServer[s.key]['peak-rss-mb'] = await procStatusMb(s.server.child.pid, 'VmHWM');
  console.log(`  ${s.label.padEnd(30)} peak RSS ${byServer[s.key]['peak-rss-mb']} MB, after the load rounds ${byServer[s.key]['rss-after-load-mb']} MB`);
  await s.server.stop();
}
results.servers = byServer;
otlpSink.close();

const h = (key: string) => byServer[key]?.health as Load | undefined;
const cpu = (l: unknown) => (l as Load)['server-cpu-us-per-request'] ?? NaN;
const rps = (l: unknown) => (l as Load).rps;
/** throughput ratio a / b, and CPU per request as b / a: both read "a is x times as good as b" */
const both = (a: unknown, b: unknown) => (a && b ? { throughput: +(rps(a) / rps(b)).toFixed(2), cpu: +(cpu(b) / cpu(a)).toFixed(2) } : null);
// the peers are compared with the production setup: PostgreSQL when it is there (PGlite, the
// development default, runs the database on the server's own thread); PGlite's ratios are kept too
const oursKey = byServer.postgres ? 'postgres' : 'pglite';
const ours = byServer[oursKey] ?? {};
const ratios: Record<string, unknown> = {
  'compared-setup': oursKey,
  'health-vs-fastify-bare': both(h(oursKey), h('fastify-bare')),
  'health-vs-fastify-pino-file': both(h(oursKey), h('fastify-pino-file')),
  'health-vs-express': both(h(oursKey), h('express')),
  'fastify-bare-vs-express': both(h('fastify-bare'), h('express')),
  'me-json-vs-own-health': both(ours['me-json'], ours.health),
  'query-json-vs-own-health': both(ours['query-json'], ours.health),
  'me-transit-vs-own-health': both(ours['me-transit'], ours.health),
  'query-transit-vs-own-health': both(ours['query-transit'], ours.health),
  'pglite-health-vs-fastify-bare': both(h('pglite'), h('fastify-bare')),
  'pglite-me-json-vs-own-health': both(byServer.pglite?.['me-json'], h('pglite')),
  'pglite-health-file-logging-on-vs-off': both(h('pglite'), h('pglite-logging-off')),
};
const metricsProfile = profiledRequests ? await profiledCpuUs(join(dir, 'metrics-profile'), isMetricsFrame) : null;
const metricsUsPerRequest = metricsProfile && profiledRequests ? metricsProfile.us / profiledRequests : null;
/** extra CPU per health request of `key` over the observability-off server, % (negative: less) */
const costPercent = (key: string) => (h(key) && h('obs-off') ? +((cpu(h(key)) / cpu(h('obs-off')) - 1) * 100).toFixed(1) : null);
const observability = {
  'health-cpu-us-off': h('obs-off') ? cpu(h('obs-off')) : null,
  'noise-floor-percent': costPercent('obs-off-again'),
  'metrics-on-percent': costPercent('obs-metrics'),
  // the metrics code's own CPU per request (profile) over the health request's CPU with metrics off
  'metrics-profiled-us-per-request': metricsUsPerRequest === null ? null : +metricsUsPerRequest.toFixed(2),
  'metrics-profiled-percent': metricsUsPerRequest === null || !h('obs-off') ? null : +(metricsUsPerRequest / cpu(h('obs-off')) * 100).toFixed(2),
  'metrics-profiled-samples': metricsProfile?.samples ?? null,
  'tracing-on-percent': costPercent('obs-tracing'),
};
ratios.observability = observability;
results.ratios = ratios;
// the targets: health against bare Fastify in throughput and CPU per request; the account reads
// against the project's own health in CPU per request (throughput shown beside it)
const target = (r: unknown, by: 'both' | 'cpu') => {
  if (!r) return 'not measured';
  const { throughput, cpu: c } = r as { throughput: number; cpu: number };
  const met = c >= 0.5 && (by === 'cpu' || throughput >= 0.5);
  return `${c} x CPU per request, ${throughput} x throughput: ${met ? 'met' : 'MISSED'}`;
};
results.targets = {
  'health >= 0.5 x bare Fastify (throughput and CPU)': target(ratios['health-vs-fastify-bare'], 'both'),
  [`/me >= 0.5 x own health, CPU (${oursKey})`]: target(ratios['me-json-vs-own-health'], 'cpu'),
  [`query account/me >= 0.5 x own health, CPU (${oursKey})`]: target(ratios['query-json-vs-own-health'], 'cpu'),
  // judged on the profile's share (steady on a shared machine); the CPU-per-request difference is shown beside it with its noise floor
  'metrics on: at most +5 % CPU per health request': observability['metrics-profiled-percent'] === null ? 'not measured'
    : `${observability['metrics-profiled-percent']} % (the metrics code's ${observability['metrics-profiled-us-per-request']} µs/req in the profile); `
      + `as a difference of two servers ${observability['metrics-on-percent']} %, noise floor ${observability['noise-floor-percent']} %: ${observability['metrics-profiled-percent'] <= 5 ? 'met' : 'MISSED'}`,
};
console.log('ratios (throughput a/b; CPU per request b/a)', ratios);
console.log('targets', results.targets);
results['finished-at'] = new Date().toISOString();
if (!ONLY) await writeFile('bench/results.json', JSON.stringify(results, null, 2) + '\n');
await rm(dir, { recursive: true, force: true });
if (!ONLY) console.log('wrote bench/results.json');
