/**
 * What metrics and tracing cost per request, measured the way bench/run.ts measures: the
 * compiled server (`npm run build:server` first) as `npm start` runs it, loaded by autocannon
 * from another process, and the server's CPU time per request from /proc (Linux).
 *
 *   node --import tsx scripts/observability-cost.ts
 *
 * Three servers run side by side: both off, METRICS_PORT on, OTEL_EXPORTER_OTLP_ENDPOINT on
 * (to a local receiver that discards the exports). They are loaded in turn, ROUNDS times,
 * interleaved, so a noisy neighbour hits every variant alike; the report gives the median of
 * each and its ratio to "off". A second "off" server gives the noise floor: two identical
 * servers differ by this much, so tracing-off costs are compared with it.
 *
 * COST_ROUNDS (default 5), COST_DURATION (seconds per load, default 4), COST_CONNECTIONS (default 20).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROUNDS = Number(process.env.COST_ROUNDS ?? 5);
const DURATION = Number(process.env.COST_DURATION ?? 4);
const CONNECTIONS = Number(process.env.COST_CONNECTIONS ?? 20);
const dir = await mkdtemp(join(tmpdir(), 'saas-cost-'));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function cpuUs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / 100;
}

const startScript = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
const FLAGS = /node ((?:--\S+ )*)dist\/server\.js/.exec(startScript)![1].trim().split(' ').filter(Boolean);

interface Variant { name: string; env: Record<string, string>; url?: string; child?: ChildProcess; cpu: number[]; rps: number[] }

// the OTLP receiver: accepts every export, keeps nothing
const sink = createHttpServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('{}')); });
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;

const variants: Variant[] = [
  { name: 'off', env: {}, cpu: [], rps: [] },
  { name: 'off (again: noise floor)', env: {}, cpu: [], rps: [] },
  { name: 'metrics on', env: { METRICS_PORT: String(await freePort()) }, cpu: [], rps: [] },
  { name: 'tracing on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }, cpu: [], rps: [] },
];

for (const v of variants) {
  const port = await freePort();
  v.child = spawn(process.execPath, [...FLAGS, 'dist/server.js'], {
    env: {
      ...process.env, ...v.env, PORT: String(port), APP_ENV: 'prod', JWT_SECRET: 'cost-secret-0123456789abcdefghijklmnopq', DATABASE_URL: 'memory://',
      MAIL_URL: 'smtp://127.0.0.1:2525', LOG_FILE: join(dir, `${port}.json`), LOG_CONSOLE: 'off', PUBLIC_DIR: join(dir, 'public'),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  v.url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (await fetch(`${v.url}/api/health`).then((r) => r.ok, () => false)) break;
    await sleep(100);
  }
}

const autocannon = join('node_modules', '.bin', 'autocannon');
async function load(v: Variant): Promise<void> {
  const args = ['-c', String(CONNECTIONS), `${v.url}/api/health`];
  await new Promise((resolve) => spawn(autocannon, ['-d', '1', ...args], { stdio: 'ignore' }).on('exit', resolve));
  const before = await cpuUs(v.child!.pid!);
  const child = spawn(autocannon, ['-j', '-d', String(DURATION), ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  await new Promise((resolve) => child.on('exit', resolve));
  const after = await cpuUs(v.child!.pid!);
  const r = JSON.parse(out) as { requests: { average: number; total: number }; non2xx: number };
  if (r.non2xx) throw new Error(`${v.name}: ${r.non2xx} non-2xx answers`);
  v.cpu.push((after - before) / r.requests.total);
  v.rps.push(r.requests.average);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  for (let round = 0; round < ROUNDS; round++) {
    // a different order each round: no variant always follows the same one
    const order = variants.map((_, i) => variants[(i + round) % variants.length]);
    for (const v of order) await load(v);
  }
  const base = median(variants[0].cpu);
  console.log(`GET /api/health, ${ROUNDS} interleaved rounds of ${DURATION} s, ${CONNECTIONS} connections; server CPU per request (median)`);
  for (const v of variants) {
    const cpu = median(v.cpu);
    console.log(`  ${v.name.padEnd(26)} ${cpu.toFixed(1).padStart(6)} µs/req  ${((cpu / base - 1) * 100).toFixed(1).padStart(6)} %   ${Math.round(median(v.rps))} req/s   (rounds: ${v.cpu.map((c) => c.toFixed(0)).join(' ')})`);
  }
} finally {
  for (const v of variants) v.child?.kill('SIGTERM');
  sink.close();
  await sleep(500);
  await rm(dir, { recursive: true, force: true });
}
