/**
 * The compared systems: each in its own process on the bench's own Node binary (24), started
 * once and kept for the whole run.
 *
 *  - peers (bench/servers/): raw node:http answering the health body, bare Fastify without a
 *    logger and with its default pino logger writing to a file, bare Express 5
 *  - this project as `npm start` runs it in prod configuration: compiled, with `npm start`'s node
 *    flags (read from package.json so they cannot drift), file logging on, console logging off
 *    unless a setup turns it on, on PostgreSQL (BENCH_DATABASE_URL) or PGlite
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { startFlags } from '../src/runtime/node-flags.js';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** a running server under test */
export interface Running {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * What a setup is: a peer answers health (bare Fastify also a bad body's 400, the framework's
 * own cost of reading and refusing one); the project answers the API's scenarios.
 */
export type Kind = 'peer' | 'peer-validating' | 'project' | 'project-health-only';

/** One compared system: how to start it and which scenarios it answers. */
export interface Setup {
  key: string;
  label: string;
  kind: Kind;
  start(): Promise<Running>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

// the project runs with the node flags of `npm start` (the same reading the server checks its own flags with)
const START_FLAGS = startFlags();
if (START_FLAGS.length === 0) throw new Error('bench: cannot find "node [flags] dist/server.js" in package.json\'s start script');

/**
 * The Node version every server runs on: this process's own binary (`npm run bench` puts
 * node_modules/.bin/node, Node 24, first on PATH), asked, not assumed.
 */
export const serverNode = execFileSync(process.execPath, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
if (Number(/^v(\d+)/.exec(serverNode)?.[1]) < 24) throw new Error(`bench: the servers would run on Node ${serverNode}; run it as \`npm run bench\` (Node 24)`);

export interface StartOptions {
  env?: Record<string, string>;
  /** node flags (for the project, after `npm start`'s) */
  flags?: string[];
  /** the server's standard output goes to this file (appended); otherwise nowhere */
  stdoutFile?: string;
}

/** Starts `script` (the compiled project, `dist/server.js`, or a peer's TypeScript file) and waits for its health answer. */
export async function startServer(script: string, options: StartOptions = {}): Promise<Running> {
  const port = await freePort();
  // a peer's TypeScript runs on Node's own type stripping, not tsx: tsx's loader made every
  // `process.nextTick` of the peer take V8's slow path (41k more instructions per request, a
  // third of bare Fastify's CPU), so the "bare" peer was not bare (docs/performance.md, round 5)
  const args = script.endsWith('.js') ? [...START_FLAGS, ...(options.flags ?? []), script] : [...(options.flags ?? []), script];
  const stdout = options.stdoutFile ? openSync(options.stdoutFile, 'a') : 'ignore';
  const child = spawn(process.execPath, args, { env: { ...process.env, ...options.env, PORT: String(port) }, stdio: ['ignore', stdout, 'inherit'] });
  if (typeof stdout === 'number') closeSync(stdout);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`bench: ${script} exited with ${child.exitCode} while starting`);
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (i === 300) throw new Error(`bench: ${script} did not answer /api/health within 30 s`);
    await sleep(100);
  }
  return {
    url,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** prod configuration for the project; `dir` holds its log file (and any public directory) */
function projectEnv(dir: string, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    APP_ENV: 'prod',
    JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnop',
    DATABASE_URL: databaseUrl,
    MAIL_URL: 'smtp://127.0.0.1:2525',
    LOG_FILE: join(dir, `saas-app-${Math.random().toString(36).slice(2)}.json`),
    LOG_CONSOLE: 'off',
    LOGIN_LIMIT_EMAIL: '0',
    LOGIN_LIMIT_ADDRESS: '0',
    // the MCP scenario loads one grant far past a person's pace: its per-grant limit would answer 429s
    MCP_LIMIT: '0',
    PUBLIC_DIR: join(dir, 'public'),
    ...extra,
  };
}

export interface SetupOptions {
  /** a directory for log files and profiles, removed after the run */
  dir: string;
  /** PostgreSQL for the project (production's database); without it the project runs on PGlite only */
  databaseUrl: string | undefined;
  /** the full run: every peer, PGlite beside PostgreSQL, observability's copies */
  full: boolean;
  /** the OTLP receiver the tracing copy exports to (full run) */
  otlpUrl?: string;
  /** the metrics port of the profiled copy (full run), scraped for its request count */
  profiledMetricsPort?: number;
  /** every server runs under V8's sampling profiler, writing its profile here when it stops (bench/profile.ts) */
  profileDir?: string;
  /**
   * another build of the project (a directory with its compiled `server.js`, e.g. the previous
   * commit's `dist/`), loaded beside this one in the same rounds: before/after on one machine state
   */
  baseline?: string;
  /** node flags for the baseline build only */
  baselineFlags?: string[];
}

/** The compared systems of a run, in the order they are loaded each round. */
export function setups(o: SetupOptions): Setup[] {
  const profiled = (key: string) => (o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, key)}`] : []);
  const peer = (key: string, label: string, script: string, env: Record<string, string> = {}, kind: Kind = 'peer'): Setup => ({
    key,
    label,
    kind,
    start: () => startServer(script, { env, flags: profiled(key) }),
  });
  const project = (
    key: string,
    label: string,
    kind: Kind,
    databaseUrl: string,
    extra: Record<string, string> = {},
    options: StartOptions = {},
    script = 'dist/server.js',
  ): Setup => ({
    key,
    label,
    kind,
    start: () => startServer(script, { ...options, flags: [...(options.flags ?? []), ...profiled(key)], env: projectEnv(o.dir, databaseUrl, extra) }),
  });
  const ours = o.databaseUrl ?? 'memory://';
  const list: Setup[] = [];
  if (o.full) list.push(peer('node-http', '(a) node:http', 'bench/servers/node-http.ts'));
  list.push(
    peer('fastify-bare', '(b) Fastify, no logger', 'bench/servers/fastify.ts', {}, 'peer-validating'),
    peer('fastify-pino-file', '(c) Fastify + pino to a file', 'bench/servers/fastify.ts', { LOG_TO: join(o.dir, 'fastify.log') }),
  );
  if (o.full) list.push(peer('express', '(d) Express 5', 'bench/servers/express.ts'));
  // production's setup: PostgreSQL when there is one, file logging on, console logging off ...
  list.push(project(o.databaseUrl ? 'postgres' : 'pglite', o.databaseUrl ? 'postgres' : 'pglite', 'project', ours));
  // BENCH_BASELINE_FLAGS: node flags of the baseline only (after `npm start`'s: a V8 flag given twice takes the later), to A/B a flag
  if (o.baseline) list.push(project('baseline', 'baseline build', 'project', ours, {}, { flags: o.baselineFlags }, join(o.baseline, 'server.js')));
  // ... and the same with prod's default console logging on too: JSON lines to standard output (a file here)
  list.push(
    project(
      'console-json',
      `${o.databaseUrl ? 'postgres' : 'pglite'}, console JSON on`,
      'project-health-only',
      ours,
      { LOG_CONSOLE: 'json' },
      { stdoutFile: join(o.dir, 'console.jsonl') },
    ),
  );
  if (!o.full) return list;
  if (o.databaseUrl) list.push(project('pglite', 'pglite', 'project', 'memory://'));
  list.push(
    // no file, no console, every signal filtered out
    project('pglite-logging-off', 'pglite, logging off', 'project-health-only', 'memory://', { LOG_FILE: 'off', LOG_CONSOLE: 'off', LOG_LEVELS: '*=fatal' }),
    // observability's cost: the same PGlite server four times; the second copy is the noise floor
    project('obs-off', 'pglite, metrics and tracing off', 'project-health-only', 'memory://'),
    project('obs-off-again', 'pglite, off again (noise floor)', 'project-health-only', 'memory://'),
  );
  list.push(
    {
      key: 'obs-metrics',
      label: 'pglite, metrics on',
      kind: 'project-health-only',
      start: async () => startServer('dist/server.js', { env: projectEnv(o.dir, 'memory://', { METRICS_PORT: String(await freePort()) }) }),
    },
    project('obs-tracing', 'pglite, tracing on (all sampled)', 'project-health-only', 'memory://', { OTEL_EXPORTER_OTLP_ENDPOINT: o.otlpUrl ?? '' }),
    // a fifth copy with metrics on under V8's profiler: the CPU its metrics code takes per request
    project(
      'obs-metrics-profiled',
      'pglite, metrics on, profiled',
      'project-health-only',
      'memory://',
      { METRICS_PORT: String(o.profiledMetricsPort ?? 0) },
      { flags: ['--cpu-prof', `--cpu-prof-dir=${join(o.dir, 'metrics-profile')}`] },
    ),
  );
  return list;
}

/** frames of the metrics code: ours, prom-client, and Node's performance observers (prom-client's GC metric) */
export const isMetricsFrame = (url: string): boolean =>
  url.includes('/dist/observability/') || url.includes('/node_modules/prom-client/') || url.startsWith('node:internal/perf/');
