/**
 * `npm run bench`: everything compared runs in this one run on this machine, and the report
 * gives ratios of CPU time per request (machines are noisy; ratios from one run are what mean
 * something), with the machine's load average beside every figure.
 *
 *   bench/servers.ts    the compared systems (peers and this project), started once each
 *   bench/scenarios.ts  what is requested of each, and the status every answer must have
 *   bench/measure.ts    load from autocannon; CPU per request, load average, steal time from /proc
 *   bench/report.ts     rows, medians, validity (load average > cores: not valid), targets, results.json
 *   bench/micro.ts      micro-benchmarks of the compiled code (full run)
 *   bench/db-path.ts    the database path alone, on PostgreSQL (full run)
 *   bench/upload.ts     a 25 MB upload to the disk driver: the server's RSS growth
 *   bench/streams.ts    1,000 open notification streams: RSS per stream, one notification's fan-out
 *   bench/audit-export.ts  the audit log's export of 1,000,000 entries (rate, RSS) and a stream under 200 changes/s (PostgreSQL only)
 *
 * Every server is started once and loaded in turn, round after round (a b c, a b c, ...), so
 * that a slow minute of a shared machine lands on all of them alike; medians are reported.
 *
 * BENCH_DATABASE_URL: PostgreSQL for the project (else PGlite). BENCH_DURATION (seconds per
 * load, default 5), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (default 5).
 * `npm run bench -- --footprint` (or BENCH_FOOTPRINT=1) measures only the embedded default's
 * resident memory (bench/footprint.ts: start, and peak under sign-ups, on a PGlite directory)
 * and prints it (nothing written): RSS holds on a busy machine where CPU figures do not. The
 * default and full runs end with the same measurement.
 * `npm run bench -- --full` (or BENCH_FULL=1) adds node:http and Express, PGlite beside
 * PostgreSQL, Transit, observability's copies, log-in and health during a log-in flood, the
 * micro-benchmarks and the database path alone. BENCH_ONLY=fastify-bare,postgres loads only
 * those setups (nothing written), for a quick A/B while working. BENCH_BASELINE=<dir> loads
 * another build of the project (its compiled `server.js` in <dir>, e.g. the previous commit's
 * `dist/` built elsewhere) in the same rounds, and reports each scenario's CPU after/before;
 * BENCH_BASELINE_FLAGS gives the baseline node flags of its own (BENCH_BASELINE=dist to A/B a flag).
 */
import { createServer as createHttpServer } from 'node:http';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { footprint, FOOTPRINT_PEAK_MAX_MB, type Footprint, type FootprintOptions } from './footprint.js';
import { CORES, load, procStatusMb, profiledCpuUs, type Load, type LoadOptions } from './measure.js';
import { cpuRatio, judge, row, summarize, validity, writeResults, type Summary, type Target } from './report.js';
import { health, logIns, scenariosFor, type Account, type Scenario } from './scenarios.js';
import { auditExportFigures, EXPORT_RATE_MIN, EXPORT_RSS_GROWTH_MAX_MB, STREAM_CATCH_UP_MAX_S, STREAM_RATE } from './audit-export.js';
import { STREAM_FANOUT_MAX_MS, STREAM_RSS_MAX_KB, streamsFootprint } from './streams.js';
import { UPLOAD_RSS_GROWTH_MAX_MB, uploadFootprint } from './upload.js';
import { freePort, isMetricsFrame, serverNode, setups, type Running, type Setup } from './servers.js';

const FULL = process.argv.includes('--full') || process.env.BENCH_FULL === '1';
const FOOTPRINT_ONLY = process.argv.includes('--footprint') || process.env.BENCH_FOOTPRINT === '1';
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
// five: a slow minute of a shared machine (seen to double every figure of a round) then moves no median
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ONLY = process.env.BENCH_ONLY?.split(',');
const pgUrl = process.env.BENCH_DATABASE_URL;
const started = Date.now();
const dir = await mkdtemp(join(tmpdir(), 'saas-bench-'));
const results: Record<string, unknown> = {
  mode: FULL ? 'full' : 'default',
  machine: { cores: CORES, node: process.version, 'server-node': serverNode },
  duration: DURATION,
  connections: CONNECTIONS,
  rounds: ROUNDS,
};
console.log(`${FOOTPRINT_ONLY ? 'footprint' : FULL ? 'full' : 'default'} run: servers on Node ${serverNode} (bench on ${process.version}), ${CORES} cores`);

/** the embedded default's resident memory, printed with its target */
async function measureFootprint(label = 'this build', options: FootprintOptions = {}): Promise<Footprint> {
  console.log(`the embedded default's footprint, ${label} (npm start on a PGlite directory, nothing configured; sign-ups from autocannon)`);
  const f = await footprint(dir, options);
  console.log(
    `  first start ${f['first-start-rss-mb']} MB, restart ${f['start-rss-mb']} MB, after ${f['sign-ups']} sign-ups (${f['sign-up-rps']}/s) ` +
      `${f['after-sign-ups-rss-mb']} MB, peak ${f['peak-rss-mb']} MB (target <= ${FOOTPRINT_PEAK_MAX_MB} MB)`,
  );
  return f;
}
if (FOOTPRINT_ONLY) {
  await measureFootprint();
  const base = process.env.BENCH_BASELINE;
  if (base) {
    const flags = process.env.BENCH_BASELINE_FLAGS?.split(' ').filter(Boolean);
    await measureFootprint(`baseline ${base} ${flags?.join(' ') ?? ''}`.trim(), { script: join(base, 'server.js'), flags });
  }
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
}

// ---- micro-benchmarks and the database path alone (full run) ---------------------------------
if (FULL && !ONLY) {
  const micro = await import('./micro.js');
  console.log('micro-benchmarks');
  results.logging = await micro.loggingMicro(dir);
  console.log('  log entry:', results.logging);
  results['console-logging'] = await micro.consoleMicro(dir);
  console.log('  console entry:', results['console-logging']);
  results.codecs = micro.codecMicro();
  console.log('  codecs:', JSON.stringify(results.codecs));
  results['async-context'] = await micro.asyncContextMicro();
  console.log('  request context and promises:', results['async-context']);
  results['metrics-per-request'] = await micro.metricsMicro();
  console.log('  metrics bookkeeping per request:', results['metrics-per-request']);
  if (pgUrl) {
    const { dbPath } = await import('./db-path.js');
    results['db-path'] = await dbPath(pgUrl, { rounds: 3, total: 8000 });
    console.log('  database path alone (this process, 50 queries in flight):', results['db-path']);
  }
}

// ---- the servers ---------------------------------------------------------------------------
// tracing's copy exports to a local OTLP receiver that discards the spans (full run)
const otlpSink = createHttpServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
if (FULL) await new Promise<void>((resolve) => otlpSink.listen(0, '127.0.0.1', resolve));
const profiledMetricsPort = FULL ? await freePort() : undefined;
const baseline = process.env.BENCH_BASELINE;
const plan = setups({
  dir,
  databaseUrl: pgUrl,
  full: FULL,
  profiledMetricsPort,
  baseline,
  baselineFlags: process.env.BENCH_BASELINE_FLAGS?.split(' ').filter(Boolean),
  otlpUrl: FULL ? `http://127.0.0.1:${(otlpSink.address() as { port: number }).port}` : undefined,
}).filter((s) => !ONLY || ONLY.includes(s.key));

interface Subject {
  setup: Setup;
  server: Running;
  scenarios: Scenario[];
  account?: Account;
}
const subjects: Subject[] = [];
for (const setup of plan) {
  const server = await setup.start();
  subjects.push({ setup, server, ...(await scenariosFor(server, setup.kind, FULL)) });
}

// ---- the rounds ------------------------------------------------------------------------------
const samples = new Map<string, Load[]>();
const consoleFile = join(dir, 'console.jsonl');
console.log(`HTTP (${CONNECTIONS} connections, ${DURATION} s per load, ${ROUNDS} interleaved rounds; load average before->during the load)`);
/** loads one scenario of one server: what is requested, with the status every answer must have */
const loadScenario = (server: Running, sc: Scenario, options: Omit<LoadOptions, 'method' | 'headers' | 'body' | 'expect'>) =>
  load(`${server.url}${sc.path}`, { method: sc.method, headers: sc.headers, body: sc.body, expect: sc.status, ...options });
for (let round = 0; round < ROUNDS; round++) {
  for (const s of subjects) {
    for (const sc of s.scenarios) {
      const r = await loadScenario(s.server, sc, { connections: CONNECTIONS, duration: DURATION, pid: s.server.pid, warmUp: round === 0 });
      const key = `${s.setup.key} ${sc.key}`;
      samples.set(key, [...(samples.get(key) ?? []), r]);
      row(`r${round + 1} ${s.setup.label} ${sc.label}`, r, r.machine);
    }
  }
  // the console copy's standard output is a file: emptied between rounds (the server appends)
  await truncate(consoleFile, 0).catch(() => undefined);
}

const byServer: Record<string, Record<string, unknown>> = {};
const summary = (setup: string, scenario: string) => byServer[setup]?.[scenario] as Summary | undefined;
console.log('medians');
for (const s of subjects) {
  const out: Record<string, unknown> = {};
  for (const sc of s.scenarios) {
    out[sc.key] = summarize(samples.get(`${s.setup.key} ${sc.key}`)!);
    row(`${s.setup.label} ${sc.label}`, out[sc.key] as Summary);
  }
  out['rss-after-load-mb'] = await procStatusMb(s.server.pid, 'VmRSS');
  byServer[s.setup.key] = out;
}

// ---- log-in, and health while log-ins run flat out (full run, once per project server) -------
if (FULL) {
  for (const s of subjects.filter((x) => x.account)) {
    const out = byServer[s.setup.key];
    for (const sc of logIns(s.account!)) {
      out[sc.key] = summarize([await loadScenario(s.server, sc, { connections: 20, duration: DURATION, pid: s.server.pid, warmUp: true })]);
      row(`${s.setup.label} ${sc.label}`, out[sc.key] as Summary);
    }
    // the event loop must keep answering while argon2 runs flat out on the thread pool
    const flood = loadScenario(s.server, logIns(s.account!)[0], { connections: 40, duration: DURATION });
    await sleep(500);
    out['health-during-log-in-flood'] = summarize([await loadScenario(s.server, health, { connections: 5, duration: Math.max(2, DURATION - 1) })]);
    await flood;
    row(`${s.setup.label} health during log-in flood`, out['health-during-log-in-flood'] as Summary);
  }
}

// the profiled copy counts its own requests (warm-ups included): the divisor of its metrics CPU
let profiledRequests: number | null = null;
if (byServer['obs-metrics-profiled']) {
  const text = await (await fetch(`http://127.0.0.1:${profiledMetricsPort}/metrics`)).text();
  profiledRequests = text
    .split('\n')
    .filter((line) => line.startsWith('http_requests_total{'))
    .reduce((n, line) => n + Number(line.split(' ').pop()), 0);
}
for (const s of subjects) {
  byServer[s.setup.key]['peak-rss-mb'] = await procStatusMb(s.server.pid, 'VmHWM');
  console.log(
    `  ${s.setup.label.padEnd(40)} peak RSS ${byServer[s.setup.key]['peak-rss-mb']} MB, after the load rounds ${byServer[s.setup.key]['rss-after-load-mb']} MB`,
  );
  await s.server.stop();
}
results.servers = byServer;
if (FULL) otlpSink.close();

// ---- ratios, validity, targets ---------------------------------------------------------------
// the peers are compared with the production setup: PostgreSQL when it is there
const ours = pgUrl ? 'postgres' : 'pglite';
const healthOf = (setup: string) => summary(setup, 'health');
const ratios: Record<string, unknown> = {
  'compared-setup': ours,
  note: 'CPU per request of the first over the second (cost multiple: lower is cheaper), and throughput of the first over the second',
  'health-vs-fastify-bare': cpuRatio(healthOf(ours), healthOf('fastify-bare')),
  'health-vs-fastify-pino-file': cpuRatio(healthOf(ours), healthOf('fastify-pino-file')),
  'not-found-vs-health': cpuRatio(summary(ours, 'not-found'), healthOf(ours)),
  'no-token-vs-health': cpuRatio(summary(ours, 'no-token'), healthOf(ours)),
  'invalid-body-vs-health': cpuRatio(summary(ours, 'invalid-body'), healthOf(ours)),
  'invalid-body-es-vs-invalid-body': cpuRatio(summary(ours, 'invalid-body-es'), summary(ours, 'invalid-body')),
  // the framework's own: what reading and refusing the same body costs bare Fastify against its health
  'fastify-bare-invalid-body-vs-health': cpuRatio(summary('fastify-bare', 'invalid-body'), healthOf('fastify-bare')),
  'invalid-body-vs-fastify-bare-invalid-body': cpuRatio(summary(ours, 'invalid-body'), summary('fastify-bare', 'invalid-body')),
  'me-json-vs-health': cpuRatio(summary(ours, 'me-json'), healthOf(ours)),
  'query-json-vs-health': cpuRatio(summary(ours, 'query-json'), healthOf(ours)),
  'mcp-get-account-vs-me-json': cpuRatio(summary(ours, 'mcp-get-account'), summary(ours, 'me-json')),
  'console-json-on-vs-off': cpuRatio(healthOf('console-json'), healthOf(ours)),
};
if (FULL) {
  Object.assign(ratios, {
    'health-vs-node-http': cpuRatio(healthOf(ours), healthOf('node-http')),
    'health-vs-express': cpuRatio(healthOf(ours), healthOf('express')),
    'me-transit-vs-health': cpuRatio(summary(ours, 'me-transit'), healthOf(ours)),
    'query-transit-vs-health': cpuRatio(summary(ours, 'query-transit'), healthOf(ours)),
    'pglite-health-vs-fastify-bare': cpuRatio(healthOf('pglite'), healthOf('fastify-bare')),
    'pglite-me-json-vs-health': cpuRatio(summary('pglite', 'me-json'), healthOf('pglite')),
    'pglite-health-file-logging-on-vs-off': cpuRatio(healthOf('pglite'), healthOf('pglite-logging-off')),
  });
}
if (baseline && byServer.baseline) {
  // this build against the baseline, scenario by scenario, in the same rounds
  ratios['this-build-vs-baseline'] = Object.fromEntries(
    subjects.find((x) => x.setup.key === 'baseline')!.scenarios.map((sc) => [sc.key, cpuRatio(summary(ours, sc.key), summary('baseline', sc.key))]),
  );
  results.baseline = { dir: baseline, 'health-vs-fastify-bare': cpuRatio(healthOf('baseline'), healthOf('fastify-bare')) };
}
results.ratios = ratios;

/** a CPU-per-request target: the first summary's CPU at most `max` times the second's */
const atMost = (name: string, of: Summary | undefined, to: Summary | undefined, max: number): Target => {
  const r = cpuRatio(of, to);
  return r
    ? {
        name,
        figure: `${r.cpu} x (${of!['server-cpu-us-per-request']} vs ${to!['server-cpu-us-per-request']} µs; throughput ${r.throughput} x; the rounds' own ratios: median ${r['cpu-paired-rounds']} x)`,
        met: r.cpu <= max,
      }
    : { name, figure: '', met: null };
};
/** a target's figure with the peer's own ratio beside it: what the framework alone pays for the same thing */
const withPeer = (target: Target, what: string, peer: ReturnType<typeof cpuRatio>): Target =>
  peer ? { ...target, figure: `${target.figure}; ${what}: ${peer.cpu} x (the rounds' own: ${peer['cpu-paired-rounds']} x)` } : target;
const targets: Target[] = [
  atMost("health <= 2 x bare Fastify's CPU per request (>= 0.5 x), file logging on", healthOf(ours), healthOf('fastify-bare'), 2),
  atMost('unknown path (404) <= 1.5 x health', summary(ours, 'not-found'), healthOf(ours), 1.5),
  atMost('no token (401) <= 1.5 x health', summary(ours, 'no-token'), healthOf(ours), 1.5),
  withPeer(
    atMost('validation (400) <= 1.5 x health', summary(ours, 'invalid-body'), healthOf(ours), 1.5),
    "bare Fastify's own 400 against its health",
    cpuRatio(summary('fastify-bare', 'invalid-body'), healthOf('fastify-bare')),
  ),
  atMost('a translated 400 <= 1.1 x the English one', summary(ours, 'invalid-body-es'), summary(ours, 'invalid-body'), 1.1),
  atMost(`/me <= 2 x own health (>= 0.5 x), ${ours}`, summary(ours, 'me-json'), healthOf(ours), 2),
  atMost(`query account/me <= 2 x own health (>= 0.5 x), ${ours}`, summary(ours, 'query-json'), healthOf(ours), 2),
  // the same route as a tool: the MCP request's own cost (its server, the JSON-RPC round, the in-process request) on top of /me's
  atMost(`MCP tools/call get-account <= 1.5 x GET /me, ${ours}`, summary(ours, 'mcp-get-account'), summary(ours, 'me-json'), 1.5),
  atMost('console JSON logging adds <= 15 % to health', healthOf('console-json'), healthOf(ours), 1.15),
];
const peak = byServer.postgres?.['peak-rss-mb'] as number | null | undefined;
if (pgUrl) targets.push({ name: 'peak RSS <= 200 MB on PostgreSQL', figure: `${peak} MB`, met: typeof peak === 'number' ? peak <= 200 : null, memory: true });
if (FULL) {
  // judged on the profile's share (steady on a shared machine); the difference of two servers is shown beside it with its noise floor
  const metricsProfile = profiledRequests ? await profiledCpuUs(join(dir, 'metrics-profile'), isMetricsFrame) : null;
  const metricsUs = metricsProfile && profiledRequests ? metricsProfile.us / profiledRequests : null;
  const offCpu = healthOf('obs-off')?.['server-cpu-us-per-request'] ?? null;
  const costPercent = (key: string) => {
    const on = healthOf(key)?.['server-cpu-us-per-request'];
    return on && offCpu ? +((on / offCpu - 1) * 100).toFixed(1) : null;
  };
  const observability = {
    'health-cpu-us-off': offCpu,
    'noise-floor-percent': costPercent('obs-off-again'),
    'metrics-on-percent': costPercent('obs-metrics'),
    'metrics-profiled-us-per-request': metricsUs === null ? null : +metricsUs.toFixed(2),
    'metrics-profiled-percent': metricsUs === null || !offCpu ? null : +((metricsUs / offCpu) * 100).toFixed(2),
    'metrics-profiled-samples': metricsProfile?.samples ?? null,
    'tracing-on-percent': costPercent('obs-tracing'),
  };
  ratios.observability = observability;
  targets.push({
    name: 'metrics on: at most +5 % CPU per health request',
    figure:
      `${observability['metrics-profiled-percent']} % (the metrics code's ${observability['metrics-profiled-us-per-request']} µs/req in the profile; ` +
      `as a difference of two servers ${observability['metrics-on-percent']} %, noise floor ${observability['noise-floor-percent']} %)`,
    met: observability['metrics-profiled-percent'] === null ? null : observability['metrics-profiled-percent'] <= 5,
  });
  const flood = byServer[ours]?.['health-during-log-in-flood'] as Summary | undefined;
  targets.push({ name: `health p99 <= 20 ms during a log-in flood, ${ours}`, figure: `${flood?.p99} ms`, met: flood ? flood.p99 <= 20 : null });
}

// the embedded default's resident memory: judged on any machine state (the CPU figures are not)
if (!ONLY) {
  const f = await measureFootprint();
  results.footprint = f;
  targets.push({
    name: `peak RSS <= ${FOOTPRINT_PEAK_MAX_MB} MB, npm start on PGlite under sign-ups`,
    figure: `${f['peak-rss-mb']} MB (start ${f['start-rss-mb']} MB)`,
    met: f['peak-rss-mb'] === null ? null : f['peak-rss-mb'] <= FOOTPRINT_PEAK_MAX_MB,
    memory: true,
  });
}

// a 25 MB upload to the disk driver: what it adds to the server's resident memory
if (!ONLY) {
  const u = await uploadFootprint(dir);
  results.upload = u;
  console.log(
    `a ${u.bytes / 1024 / 1024} MB upload (disk driver): RSS ${u['rss-before-mb']} MB before, peak ${u['peak-rss-during-mb']} MB during (${u['growth-mb']} MB more), ${u.seconds} s`,
  );
  targets.push({
    name: `RSS growth <= ${UPLOAD_RSS_GROWTH_MAX_MB} MB during a 25 MB upload (disk driver)`,
    figure: `${u['growth-mb']} MB`,
    met: u['growth-mb'] === null ? null : u['growth-mb'] <= UPLOAD_RSS_GROWTH_MAX_MB,
    memory: true,
  });
}

// 1,000 open notification streams on one instance: their memory, and one notification's fan-out
if (!ONLY) {
  const st = await streamsFootprint(dir);
  results.streams = st;
  console.log(
    `${st.streams} notification streams: RSS ${st['rss-before-mb']} MB before, ${st['rss-open-mb']} MB open (${st['kb-per-stream']} KB each); one notification reached ${st.reached} in ${st['fanout-ms']} ms`,
  );
  targets.push({
    name: `RSS <= ${STREAM_RSS_MAX_KB} KB per open notification stream (${st.streams} open)`,
    figure: `${st['kb-per-stream']} KB`,
    met: st['kb-per-stream'] === null ? null : st['kb-per-stream'] <= STREAM_RSS_MAX_KB,
    memory: true,
  });
  targets.push({
    name: `one notification reaches all ${st.streams} streams within ${STREAM_FANOUT_MAX_MS} ms`,
    figure: `${st.reached} in ${st['fanout-ms']} ms`,
    met: st.reached === st.streams && st['fanout-ms'] <= STREAM_FANOUT_MAX_MS,
    memory: true,
  });
}

// the audit log's export of 1,000,000 entries and a stream under 200 changes a second (PostgreSQL only)
if (!ONLY && pgUrl) {
  const a = await auditExportFigures(dir, pgUrl);
  results['audit-export'] = a;
  console.log(
    `audit log export of ${a.entries} entries: ${a.seconds} s (${a['entries-per-second']}/s), RSS ${a['rss-before-mb']} MB before, peak ${a['peak-rss-during-mb']} MB (${a['growth-mb']} MB more); a stream under ${STREAM_RATE} changes/s delivered ${a['stream-delivered']} of ${a['stream-changes']}, caught up ${a['stream-catch-up-s']} s after the last`,
  );
  targets.push({
    name: `the audit log export runs at >= ${EXPORT_RATE_MIN} entries/s (${a.entries} entries, PostgreSQL)`,
    figure: `${a['entries-per-second']}/s`,
    met: a['entries-per-second'] >= EXPORT_RATE_MIN,
  });
  targets.push({
    name: `RSS growth <= ${EXPORT_RSS_GROWTH_MAX_MB} MB during the audit log export of ${a.entries} entries`,
    figure: `${a['growth-mb']} MB`,
    met: a['growth-mb'] === null ? null : a['growth-mb'] <= EXPORT_RSS_GROWTH_MAX_MB,
    memory: true,
  });
  targets.push({
    name: `an audit log stream keeps up with ${STREAM_RATE} audited changes/s (everything within ${STREAM_CATCH_UP_MAX_S} s of the last)`,
    figure: `${a['stream-delivered']} of ${a['stream-changes']}, ${a['stream-catch-up-s']} s`,
    met: a['stream-delivered'] === a['stream-changes'] && a['stream-catch-up-s'] !== null && a['stream-catch-up-s'] <= STREAM_CATCH_UP_MAX_S,
  });
}

const v = validity([...samples.values()].flat().map((l) => l.machine));
results.validity = v;
results.targets = judge(targets, v);
console.log('ratios (CPU per request of the first over the second; throughput likewise)', ratios);
console.log(v.verdict);
console.log('targets', results.targets);
results.minutes = +((Date.now() - started) / 60_000).toFixed(1);
results['finished-at'] = new Date().toISOString();
if (!ONLY) {
  await writeResults('bench/results.json', results);
  console.log('wrote bench/results.json');
}
await rm(dir, { recursive: true, force: true });
console.log(`the run took ${results.minutes} minutes`);
