/**
 * `npm run bench`: everything compared runs in this one run on this machine, and the report
 * gives ratios (machines are noisy; ratios from one run are what mean something).
 *
 *  1. micro: one log entry with request context vs a plain pino call; a filtered-out signal;
 *     encoding and decoding a 100-account list in JSON, EDN and Transit
 *  2. HTTP, each server in its own process, loaded by autocannon from another process with the
 *     same connections and duration: raw node:http, bare Fastify (no logger; default pino
 *     logger to a file), bare Express 5, and this project in prod configuration (file logging,
 *     compression, JWT middleware) on PGlite, and on PostgreSQL when BENCH_DATABASE_URL is set
 *  3. this project: /api/account/me, the query endpoint and log-in in JSON and Transit, and the
 *     latency of /api/health while log-ins run flat out; peak RSS per server; the server's CPU
 *     time per request (from /proc, Linux), the steadiest figure on a noisy machine
 *
 * BENCH_DURATION (seconds per measurement, default 5) and BENCH_CONNECTIONS (default 50).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { Format } from '../src/http/codecs.js';

// the compiled modules (`npm run bench` builds first): production code, as `npm start` runs it
const compiled = <T>(path: string): Promise<T> => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
const { edn, json, transitJson } = await compiled<typeof import('../src/http/codecs.js')>('http/codecs.js');
const { runWithContext } = await compiled<typeof import('../src/logging/context.js')>('logging/context.js');
const { RotatingFileHandler } = await compiled<typeof import('../src/logging/file-handler.js')>('logging/file-handler.js');
const { LevelFilter, presetRules } = await compiled<typeof import('../src/logging/filter.js')>('logging/filter.js');
const { LogBackend } = await compiled<typeof import('../src/logging/logger.js')>('logging/logger.js');
const { createRedactor } = await compiled<typeof import('../src/logging/redact.js')>('logging/redact.js');

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
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

interface Running { url: string; child: ChildProcess; stop(): Promise<void> }

async function startServer(script: string, env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  // the project runs as `npm start` runs it: compiled, with the same node flags
  const args = script.startsWith('dist/') ? [...START_FLAGS!, script] : ['--import', 'tsx', script];
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

/** one table row: requests/s, latency, the server's CPU per request, and anything extra */
function report(label: string, r: Load, extra = ''): void {
  const cpu = r['server-cpu-us-per-request'] ? `  cpu ${r['server-cpu-us-per-request']} µs/req` : '';
  const failures = r.non2xx || r.errors ? `  (non-2xx ${r.non2xx}, errors ${r.errors})` : '';
  console.log(`  ${label.padEnd(34)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${cpu}${extra}${failures}`);
}

async function peakRssMb(pid: number | undefined): Promise<number | null> {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
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

/** Loads `url` from an autocannon process; with `pid`, also the server's CPU per request. */
async function load(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; connections?: number; duration?: number; pid?: number } = {}): Promise<Load> {
  const request = ['-c', String(options.connections ?? CONNECTIONS), '-m', options.method ?? 'GET'];
  for (const [k, v] of Object.entries(options.headers ?? {})) request.push('-H', `${k}=${v}`);
  if (options.body) request.push('-b', options.body);
  request.push(url);
  const autocannon = join('node_modules', '.bin', 'autocannon');
  // one second first, not counted: the JIT and the connection pool warm up for every server alike
  await new Promise((resolve) => spawn(autocannon, ['-d', '1', ...request], { stdio: 'ignore' }).on('exit', resolve));
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

async function measurePeer(name: string, script: string, env: Record<string, string> = {}) {
  const server = await startServer(script, env);
  const health = await load(`${server.url}/api/health`, { pid: server.child.pid });
  const rss = await peakRssMb(server.child.pid);
  await server.stop();
  report(name, health, `  rss ${rss} MB`);
  return { ...health, 'peak-rss-mb': rss };
}

async function measureProject(name: string, databaseUrl: string) {
  const server = await startServer('dist/server.js', projectEnv(databaseUrl));
  const out: Record<string, unknown> = {};
  const show = (label: string, r: Load) => report(`${name} ${label}`, r);
  out.health = await load(`${server.url}/api/health`, { pid: server.child.pid });
  show('GET /api/health', out.health as Load);

  const email = `bench-${Date.now()}@example.com`;
  const password = 'bench password 123';
  await fetch(`${server.url}/api/account/sign-up`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const login = await (await fetch(`${server.url}/api/account/log-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).json() as { 'access-token': string };
  const auth = { authorization: `Bearer ${login['access-token']}` };
  for (const format of [json, transitJson]) {
    const h = { ...auth, accept: format.mime, 'content-type': format.mime };
    out[`me-${format.name}`] = await load(`${server.url}/api/account/me`, { headers: { ...auth, accept: format.mime }, pid: server.child.pid });
    show(`GET /me (${format.name})`, out[`me-${format.name}`] as Load);
    out[`query-${format.name}`] = await load(`${server.url}/api/cqrs/query`, { method: 'POST', headers: h, body: format.encode({ 'query/kind': 'account/me' }), pid: server.child.pid });
    show(`query account/me (${format.name})`, out[`query-${format.name}`] as Load);
    out[`log-in-${format.name}`] = await load(`${server.url}/api/account/log-in`, { method: 'POST', headers: { accept: format.mime, 'content-type': format.mime }, body: format.encode({ email, password }), connections: 20 });
    show(`POST /log-in (${format.name})`, out[`log-in-${format.name}`] as Load);
  }
  // the event loop must keep answering while argon2 runs flat out on the thread pool
  const flood = load(`${server.url}/api/account/log-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }), connections: 40 });
  await sleep(500);
  out['health-during-log-in-flood'] = await load(`${server.url}/api/health`, { connections: 5, duration: Math.max(2, DURATION - 1) });
  await flood;
  show('health during log-in flood', out['health-during-log-in-flood'] as Load);
  out['peak-rss-mb'] = await peakRssMb(server.child.pid);
  console.log(`  ${name} peak RSS ${out['peak-rss-mb']} MB`);
  await server.stop();
  return out;
}

console.log('micro-benchmarks');
results.logging = await loggingMicro();
console.log(' ', results.logging);
results.codecs = codecMicro();
console.log(' ', JSON.stringify(results.codecs));

console.log(`HTTP (${CONNECTIONS} connections, ${DURATION} s each)`);
const peers = {
  'node-http': await measurePeer('(a) node:http', 'bench/servers/node-http.ts'),
  'fastify-bare': await measurePeer('(b) Fastify, no logger', 'bench/servers/fastify.ts'),
  'fastify-pino-file': await measurePeer('(c) Fastify + pino to a file', 'bench/servers/fastify.ts', { LOG_TO: join(dir, 'fastify.log') }),
  express: await measurePeer('(d) Express 5', 'bench/servers/express.ts'),
};
results.peers = peers;
// the same server with logging off: no file, no console, every signal filtered out
async function healthWithoutLogging(): Promise<Load> {
  const server = await startServer('dist/server.js', { ...projectEnv('memory://'), LOG_FILE: 'off', LOG_CONSOLE: 'off', LOG_LEVELS: '*=fatal' });
  const r = await load(`${server.url}/api/health`, { pid: server.child.pid });
  await server.stop();
  report('pglite GET /api/health, logging off', r);
  return r;
}
const project: Record<string, unknown> = { pglite: await measureProject('pglite', 'memory://'), 'pglite-logging-off': { health: await healthWithoutLogging() } };
if (process.env.BENCH_DATABASE_URL) project.postgres = await measureProject('postgres', process.env.BENCH_DATABASE_URL);
results.project = project;

const rps = (x: unknown) => (x as { rps: number }).rps;
// the peers are compared with the production setup: PostgreSQL when it is there (PGlite, the
// development default, runs the database on the server's own thread); PGlite's ratios are kept too
const ours = (project.postgres ?? project.pglite) as Record<string, unknown>;
const pglite = project.pglite as Record<string, unknown>;
const ratio = (a: unknown, b: unknown) => +(rps(a) / rps(b)).toFixed(2);
const ratios: Record<string, number | string> = {
  'compared-setup': project.postgres ? 'postgres' : 'pglite',
  'health-vs-fastify-bare': ratio(ours.health, peers['fastify-bare']),
  'health-vs-fastify-pino-file': ratio(ours.health, peers['fastify-pino-file']),
  'health-vs-express': ratio(ours.health, peers.express),
  'fastify-bare-vs-express': ratio(peers['fastify-bare'], peers.express),
  'me-vs-own-health': ratio(ours['me-json'], ours.health),
  'pglite-health-vs-fastify-bare': ratio(pglite.health, peers['fastify-bare']),
  'pglite-health-vs-fastify-pino-file': ratio(pglite.health, peers['fastify-pino-file']),
  'pglite-health-vs-express': ratio(pglite.health, peers.express),
  'health-file-logging-on-vs-off': ratio(pglite.health, (project['pglite-logging-off'] as Record<string, unknown>).health),
};
results.ratios = ratios;
console.log('ratios', ratios);
results['finished-at'] = new Date().toISOString();
await writeFile('bench/results.json', JSON.stringify(results, null, 2) + '\n');
await rm(dir, { recursive: true, force: true });
console.log('wrote bench/results.json');
