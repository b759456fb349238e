/**
 * Where a request's CPU time goes: one compared system under V8's sampling profiler
 * (`--cpu-prof`), loaded with one scenario, then the self time per function and per area
 * (Node's internals, Fastify, this project's code, each other package, the garbage collector)
 * divided by the requests served, in µs per request (and scaled to the CPU time per request
 * /proc measured: V8 samples on a wall clock, so on a busy machine time spent waiting for a core
 * lands on whatever frame was running; the shares are what to read).
 *
 *   npm run bench:profile -- postgres not-found          (builds first)
 *   npm run bench:profile -- fastify-bare health 10      (seconds; default BENCH_DURATION or 8)
 *
 * The setups and scenarios are bench/servers.ts's and bench/scenarios.ts's; BENCH_DATABASE_URL
 * as for the bench. Compare a profile of the project with one of bare Fastify under the same
 * load: the difference per area is what the project adds. Figures under a profiler are higher
 * than without one (sampling costs a little); read them as shares, and the bench for totals.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './measure.js';
import { scenariosFor } from './scenarios.js';
import { setups } from './servers.js';

const [setupKey = 'postgres', scenarioKey = 'health', seconds] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const DURATION = Number(seconds ?? process.env.BENCH_DURATION ?? 8);
const TOP = Number(process.env.PROFILE_TOP ?? 40);
const dir = await mkdtemp(join(tmpdir(), 'saas-profile-'));
const profileDir = join(dir, 'profiles');
const setup = setups({ dir, databaseUrl: process.env.BENCH_DATABASE_URL, full: true, profileDir }).find((s) => s.key === setupKey);
if (!setup) throw new Error(`bench:profile: no setup ${setupKey} (see bench/servers.ts)`);

const server = await setup.start();
let requests = 0;
/** the server's CPU per request over the measured load, from /proc (the bench's figure) */
let cpuPerRequest: number | null = null;
/** the measured load's window on the monotonic clock (µs), which V8's profile timestamps share */
let window = { from: 0, to: 0 };
try {
  const { scenarios } = await scenariosFor(server, setup.kind, true);
  const scenario = scenarios.find((s) => s.key === scenarioKey);
  if (!scenario) throw new Error(`bench:profile: ${setupKey} has no scenario ${scenarioKey}; it has ${scenarios.map((s) => s.key).join(', ')}`);
  const options = { method: scenario.method, headers: scenario.headers, body: scenario.body, expect: scenario.status, connections: 50, pid: server.pid };
  await load(`${server.url}${scenario.path}`, { ...options, duration: 2 });
  // only the samples taken during the measured load count (not start-up, not the warm-up)
  const from = Number(process.hrtime.bigint() / 1000n);
  const r = await load(`${server.url}${scenario.path}`, { ...options, duration: DURATION });
  window = { from, to: Number(process.hrtime.bigint() / 1000n) };
  requests = r.requests;
  cpuPerRequest = r['server-cpu-us-per-request'];
  console.log(
    `${setup.label} ${scenario.label}: ${r.rps} req/s, ${r['server-cpu-us-per-request']} µs CPU per request (profiled), load average ${r.machine['load-before']}->${r.machine['load-during']}`,
  );
} finally {
  await server.stop();
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const files = await readdir(join(profileDir, setupKey));
const profile = JSON.parse(await readFile(join(profileDir, setupKey, files.find((f) => f.endsWith('.cpuprofile'))!), 'utf8')) as {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i] ?? 0;
  if (at >= window.from && at <= window.to) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

/** native functions worth telling apart: what they are, by their caller */
const NATIVE: Record<string, string> = {
  writeUtf8String: '(native) socket write',
  writev: '(native) socket write',
  writeBuffer: '(native) file and socket write of a buffer',
  readdir: '(native) fs',
  stat: '(native) fs',
  lstat: '(native) fs',
  open: '(native) fs',
  readFileUtf8: '(native) fs',
};

/** the area of a frame: a package, this project's compiled code, Node's internals, or V8's own entries */
function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : (NATIVE[name] ?? (/^validate\d+$/.test(name) ? 'ajv (compiled validators)' : '(native)'));
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return `project ${url.slice(url.indexOf('/dist/') + 6)}`;
  if (url.startsWith('node:'))
    return `node ${
      url
        .slice(5)
        .replace(/^internal\//, '')
        .split('/')[0]
    }`;
  return url;
}

/** a function's name and place: `name dist/http/static.js:12`, `name node_modules/fastify/lib/reply.js:273`, or the name alone (native) */
function frameKey({ functionName, url, lineNumber }: Node['callFrame']): string {
  return url ? `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : functionName || '(anonymous)';
}

const byFunction = new Map<string, number>();
const byArea = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
  if (functionName === '(idle)') continue;
  total += us;
  const key = frameKey({ functionName, url, lineNumber });
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const a = area(url, functionName);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
}
const perRequest = (us: number) => (us / requests).toFixed(2).padStart(7);
// V8 samples on a wall clock: time the process spent waiting for a core lands on the frame it
// was in. The shares are kept and scaled to the CPU per request /proc measured over the load.
const scaled = (us: number) => (cpuPerRequest === null ? '' : `${((us / total) * cpuPerRequest).toFixed(2).padStart(7)}  `);
console.log(
  `\n${requests} requests, ${(total / 1000).toFixed(0)} ms of profile samples (idle excluded): ${perRequest(total)} µs per request; /proc: ${cpuPerRequest} µs of CPU per request`,
);
console.log("\nself time by area, µs per request: scaled to /proc's CPU, then as sampled");
for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1]).slice(0, 25)) console.log(`${scaled(us)}${perRequest(us)}  ${a}`);
console.log(`\nself time by function (top ${TOP}), µs per request`);
for (const [f, us] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, TOP)) console.log(`${perRequest(us)}  ${f}`);
// who calls the costliest functions (native ones have no place of their own: their callers tell what they are)
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
const label = (id: number | undefined) => {
  const f = id === undefined ? undefined : nodes.get(id)?.callFrame;
  return f ? frameKey(f) : '(root)';
};
const CALLERS = Number(process.env.PROFILE_CALLERS ?? 6);
for (const [f] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, CALLERS)) {
  const byCaller = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (label(id) !== f) continue;
    // two frames up: the caller and its caller
    const chain = `${label(parents.get(id))} <- ${label(parents.get(parents.get(id) ?? -1))}`;
    byCaller.set(chain, (byCaller.get(chain) ?? 0) + us);
  }
  console.log(`\ncallers of ${f}`);
  for (const [c, us] of [...byCaller].sort((x, y) => y[1] - x[1]).slice(0, 5)) console.log(`${perRequest(us)}  ${c}`);
}
await rm(dir, { recursive: true, force: true });
