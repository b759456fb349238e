/**
 * Measurement: how much load a server took and what it cost, and how busy the machine was
 * meanwhile. Everything here reads Linux's /proc; off Linux the CPU and load figures are null.
 *
 *  - the server's CPU time per request: user + system time of its process (all threads) from
 *    `/proc/<pid>/stat`, before and after a load, divided by the requests autocannon completed
 *  - the machine's load average (`/proc/loadavg`, one minute) before a load and sampled every
 *    second during it; the CPU that other processes than the bench's own took over the load
 *    (`/proc/stat`'s busy time less the bench, autocannon, the server and PostgreSQL), and the
 *    steal time (CPU time the hypervisor gave to other guests): a load during which other work
 *    took more than a sliver of a core is saturated
 *  - the requests per second and latency, from autocannon run as a child process
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/** the cores the machine gives this process: the line above which its load average means saturation */
export const CORES = availableParallelism();

/** clock ticks per second of the utime/stime fields in /proc (USER_HZ, 100 on every Linux Node supports) */
const TICKS_PER_S = 100;

/** the CPU time (user + system, all threads) a process has used so far, µs; null off Linux or once it is gone */
export async function processCpuUs(pid: number | undefined): Promise<number | null> {
  try {
    // the command name (field 2) may hold spaces: the fields after it start after its ')'
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/**
 * The CPU time V8's helper threads of a process have used so far (its threads named `V8Worker`:
 * parallel and concurrent garbage collection, background compilation), µs; null off Linux.
 * Next to the process's total it shows a run whose server promotes its requests' objects to the
 * old generation (round 6 of docs/performance.md: 12 µs of every request on these threads,
 * against a fraction of one otherwise).
 */
export async function helperThreadsCpuUs(pid: number | undefined): Promise<number | null> {
  try {
    let total = 0;
    for (const task of await readdir(`/proc/${pid}/task`)) {
      const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => '');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name !== 'V8Worker') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
    }
    return total;
  } catch {
    return null;
  }
}

/** `VmRSS` (resident now) or `VmHWM` (peak resident) of a process, MB */
export async function procStatusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): Promise<number | null> {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** the one-minute load average: runnable (and uninterruptible) tasks, averaged; null off Linux */
export function loadAverage(): number | null {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

interface CpuTimes {
  total: number;
  busy: number;
  steal: number;
}

/** the machine's CPU time so far, all cores, in ticks: the total, the busy part and the steal part (null off Linux) */
function cpuTimes(): CpuTimes | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
    const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
    return { total: user + nice + system + idle + iowait + irq + softirq + steal, busy: user + nice + system + irq + softirq, steal };
  } catch {
    return null;
  }
}

/** ticks from a /proc/<pid>/stat: utime + stime, and the reaped children's cutime + cstime */
function statTicks(pid: number | 'self'): { own: number; children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** CPU ticks used so far by PostgreSQL's processes (the project's database server is part of what is measured) */
function postgresTicks(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks;
}

/**
 * The CPU ticks of everything the bench itself runs: this process, its reaped children (the
 * autocannon of each load, counted once it exits), the server under load and PostgreSQL.
 */
function benchTicks(serverPid: number | undefined): number {
  const self = statTicks('self');
  const server = serverPid === undefined ? null : statTicks(serverPid);
  return (self ? self.own + self.children : 0) + (server?.own ?? 0) + postgresTicks();
}

/** How busy the machine was around one load. */
export interface MachineLoad {
  /** the one-minute load average just before the load started */
  'load-before': number | null;
  /** its highest value sampled during the load (once a second, and at the end) */
  'load-during': number | null;
  /**
   * the CPU other processes than the bench's own took during the load, in cores (the machine's
   * busy time less the bench, its autocannon, the server and PostgreSQL); null off Linux
   */
  'others-cores': number | null;
  /** the share of the machine's CPU time the hypervisor gave to other guests during the load, %; null where not visible */
  'steal-percent': number | null;
  /** other work took more than {@link OTHERS_MAX_CORES} of a core, or steal was above 5 %: the figures of this load are not valid for targets */
  saturated: boolean;
}

/**
 * Other work beyond this (cores, averaged over a load) makes the load not valid. The bench keeps
 * about two tasks runnable by itself (autocannon and the server, and PostgreSQL for the project),
 * so on a 2-core machine the load average sits near or above 2 even on an otherwise idle machine:
 * what decides is the CPU of everything else (docs/performance.md, "Validity").
 */
export const OTHERS_MAX_CORES = 0.15;

/** Samples the machine from `start` until the returned function is called; `serverPid`: the server under load. */
export function watchMachine(serverPid?: number): () => MachineLoad {
  const before = loadAverage();
  const cpuBefore = cpuTimes();
  const benchBefore = benchTicks(serverPid);
  let during = before;
  const sample = () => {
    const now = loadAverage();
    if (now !== null && (during === null || now > during)) during = now;
  };
  const timer = setInterval(sample, 1000);
  return () => {
    clearInterval(timer);
    sample();
    const cpuAfter = cpuTimes();
    const ticks = cpuBefore && cpuAfter ? cpuAfter.total - cpuBefore.total : 0;
    // a kernel that does not account steal time shows 0 for it: visible only when it moved at all
    const steal = cpuBefore && cpuAfter && ticks > 0 ? ((cpuAfter.steal - cpuBefore.steal) / ticks) * 100 : null;
    // total ticks are summed over the cores: their count over the cores is the elapsed time in ticks
    const others =
      cpuBefore && cpuAfter && ticks > 0 ? Math.max(0, cpuAfter.busy - cpuBefore.busy - (benchTicks(serverPid) - benchBefore)) / (ticks / CORES) : null;
    return {
      'load-before': before,
      'load-during': during,
      'others-cores': others === null ? null : +others.toFixed(2),
      'steal-percent': steal === null ? null : +steal.toFixed(1),
      saturated: others === null ? (before ?? 0) > CORES : others > OTHERS_MAX_CORES || (steal ?? 0) > 5,
    };
  };
}

/** One load's figures. */
export interface Load {
  /** requests completed */
  requests: number;
  rps: number;
  /** latency percentiles, ms */
  p50: number;
  p99: number;
  /** answers with another status than the scenario expects, and connection errors (autocannon counts timeouts among them) */
  unexpected: number;
  errors: number;
  /** the server's CPU time per completed request, µs (null off Linux) */
  'server-cpu-us-per-request': number | null;
  /** of that, V8's helper threads (garbage collection, background compilation), µs */
  'helper-threads-us-per-request': number | null;
  machine: MachineLoad;
}

export interface LoadOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** seconds */
  duration: number;
  /** the server's process: its CPU time per request is measured */
  pid?: number;
  /** one uncounted second first (the JIT and the connection pools warm up for every server alike) */
  warmUp?: boolean;
  /** the status every answer should have; default 200 */
  expect?: number;
  /** autocannon replaces `[<id>]` in the body with a new id per request (sign-ups of distinct accounts) */
  idReplacement?: boolean;
}

const AUTOCANNON = join('node_modules', '.bin', 'autocannon');

function autocannon(args: string[], output: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(AUTOCANNON, args, { stdio: ['ignore', output ? 'pipe' : 'ignore', 'ignore'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`autocannon exited with ${code}`))));
  });
}

/**
 * CPU µs per request between two readings, to a tenth of a µs: a bare server's ~10 µs rounded to
 * whole µs moved its ratios by up to 10 %.
 */
function perRequest(before: number | null, after: number | null, requests: number): number | null {
  return before !== null && after !== null && requests > 0 ? Math.round(((after - before) / requests) * 10) / 10 : null;
}

/** Loads `url` from an autocannon process with `connections` for `duration` seconds. */
export async function load(url: string, options: LoadOptions): Promise<Load> {
  const request = ['-c', String(options.connections), '-m', options.method ?? 'GET'];
  for (const [k, v] of Object.entries(options.headers ?? {})) request.push('-H', `${k}=${v}`);
  if (options.body) request.push('-b', options.body);
  if (options.idReplacement) request.push('-I');
  request.push(url);
  if (options.warmUp) await autocannon(['-d', '1', ...request], false);
  const stopWatching = watchMachine(options.pid);
  const cpuBefore = await processCpuUs(options.pid);
  const helpersBefore = await helperThreadsCpuUs(options.pid);
  const out = await autocannon(['-j', '-d', String(options.duration), ...request], true);
  const cpuAfter = await processCpuUs(options.pid);
  const helpersAfter = await helperThreadsCpuUs(options.pid);
  const machine = stopWatching();
  const r = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    statusCodeStats: Record<string, { count: number }>;
  };
  const expected = r.statusCodeStats[String(options.expect ?? 200)]?.count ?? 0;
  return {
    requests: r.requests.total,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    unexpected: r.requests.total - expected,
    errors: r.errors,
    'server-cpu-us-per-request': perRequest(cpuBefore, cpuAfter, r.requests.total),
    'helper-threads-us-per-request': perRequest(helpersBefore, helpersAfter, r.requests.total),
    machine,
  };
}

/**
 * CPU time a server spent in frames whose script URL `inside` matches, from V8's sampling
 * profiler (`--cpu-prof`, written when the process exits): each matched sample stands for the
 * time since the one before it. Measured inside the one process, so a noisy neighbour cannot
 * add to it the way it adds to a difference between two servers.
 */
export async function profiledCpuUs(profileDir: string, inside: (url: string) => boolean): Promise<{ us: number; samples: number } | null> {
  const file = (await readdir(profileDir).catch(() => [])).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return null;
  const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { url: string } }>;
    samples: number[];
    timeDeltas: number[];
  };
  const urls = new Map(profile.nodes.map((n) => [n.id, n.callFrame.url]));
  let us = 0;
  let samples = 0;
  profile.samples.forEach((id, i) => {
    if (inside(urls.get(id) ?? '')) {
      us += profile.timeDeltas[i] ?? 0;
      samples++;
    }
  });
  return { us, samples };
}

/** ns per call of `fn`, after a warm-up of up to 2 000 calls */
export function timeOps(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / n;
}
