/**
 * The report: one line per load as it is measured, the medians over the rounds, how busy the
 * machine was, the ratios, the targets, and bench/results.json.
 *
 * Validity: a run is valid for targets only when no load of it ran beside other work (more than
 * OTHERS_MAX_CORES of a core taken by processes other than the bench's own, or steal above 5 %):
 * on a contended machine every server's CPU per request inflates, the small ones most, so ratios
 * drift toward 1 and a regression hides. The load average is recorded beside it, but it cannot
 * decide alone: the bench keeps about two tasks runnable by itself (autocannon and the server),
 * so on 2 cores it sits near 2 on an idle machine. A target is then reported as "met" or
 * "MISSED"; on a run that is not valid it is "not judged" with what the figures would say.
 */
import { writeFile } from 'node:fs/promises';
import { CORES, OTHERS_MAX_CORES, type Load, type MachineLoad } from './measure.js';

/** the median of each figure over the rounds, and the per-round figures beside it */
export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  unexpected: number;
  errors: number;
  'server-cpu-us-per-request': number | null;
  /** of that, V8's helper threads' (measure.ts) */
  'helper-threads-us-per-request': number | null;
  rounds: number;
  'cpu-per-round': Array<number | null>;
  'machine-per-round': MachineLoad[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function summarize(samples: Load[]): Summary {
  const pick = (f: (l: Load) => number) => median(samples.map(f));
  const cpu = samples.map((l) => l['server-cpu-us-per-request']).filter((x): x is number => typeof x === 'number');
  const helpers = samples.map((l) => l['helper-threads-us-per-request']).filter((x): x is number => typeof x === 'number');
  return {
    rps: pick((l) => l.rps),
    p50: pick((l) => l.p50),
    p99: pick((l) => l.p99),
    unexpected: samples.reduce((n, l) => n + l.unexpected, 0),
    errors: samples.reduce((n, l) => n + l.errors, 0),
    'server-cpu-us-per-request': cpu.length ? median(cpu) : null,
    'helper-threads-us-per-request': helpers.length ? median(helpers) : null,
    rounds: samples.length,
    'cpu-per-round': samples.map((l) => l['server-cpu-us-per-request']),
    'machine-per-round': samples.map((l) => l.machine),
  };
}

const fmtLoad = (x: number | null) => (x === null ? '?' : x.toFixed(2));

/** one table row: requests/s, latency, the server's CPU per request, the machine's load, failures */
export function row(label: string, r: Load | Summary, machine?: MachineLoad): void {
  const helpers = r['helper-threads-us-per-request'] !== null ? ` (V8 helpers ${r['helper-threads-us-per-request']})` : '';
  const cpu = r['server-cpu-us-per-request'] !== null ? `  cpu ${r['server-cpu-us-per-request']} µs/req${helpers}` : '';
  const others = machine?.['others-cores'] !== null && machine?.['others-cores'] !== undefined ? ` others ${machine['others-cores'].toFixed(2)} cores` : '';
  const busy = machine
    ? `  load ${fmtLoad(machine['load-before'])}->${fmtLoad(machine['load-during'])}${others}${machine['steal-percent'] ? ` steal ${machine['steal-percent']} %` : ''}${machine.saturated ? ' SATURATED' : ''}`
    : '';
  const failures = r.unexpected || r.errors ? `  (unexpected status ${r.unexpected}, errors ${r.errors})` : '';
  console.log(`  ${label.padEnd(52)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms${cpu}${busy}${failures}`);
}

/** How busy the machine was over every counted load of the run, and whether the run is valid for targets. */
export interface Validity {
  cores: number;
  'loads-measured': number;
  'loads-saturated': number;
  'load-average-min': number | null;
  'load-average-max': number | null;
  'steal-percent-max': number | null;
  /** the most CPU other processes took during one load, cores */
  'others-cores-max': number | null;
  valid: boolean;
  verdict: string;
}

export function validity(machines: MachineLoad[]): Validity {
  const loads = machines.flatMap((m) => [m['load-before'], m['load-during']]).filter((x): x is number => x !== null);
  const steals = machines.map((m) => m['steal-percent']).filter((x): x is number => x !== null);
  const others = machines.map((m) => m['others-cores']).filter((x): x is number => x !== null);
  const saturated = machines.filter((m) => m.saturated).length;
  const min = loads.length ? Math.min(...loads) : null;
  const max = loads.length ? Math.max(...loads) : null;
  const known = loads.length > 0 && others.length === machines.length;
  const valid = known && saturated === 0;
  const othersMax = others.length ? Math.max(...others) : null;
  const range = known
    ? `other processes took at most ${othersMax!.toFixed(2)} cores during a load; load average ${min!.toFixed(2)}–${max!.toFixed(2)} on ${CORES} cores, the bench's own tasks included`
    : "the machine's CPU and load average not visible (not Linux)";
  return {
    cores: CORES,
    'loads-measured': machines.length,
    'loads-saturated': saturated,
    'load-average-min': min,
    'load-average-max': max,
    'steal-percent-max': steals.length ? Math.max(...steals) : null,
    'others-cores-max': othersMax,
    valid,
    verdict: valid
      ? `valid for targets: ${range}`
      : known
        ? `NOT VALID for targets: ${saturated} of ${machines.length} loads ran beside other work (more than ${OTHERS_MAX_CORES} cores, or steal above 5 %; ${range}); the figures are inflated, read them as a trend only`
        : `NOT VALID for targets: ${range}`,
  };
}

/** a ratio of CPU per request, `of / to`, and throughput `of / to`, from two summaries */
export interface Ratio {
  /** the judged figure: the first's median CPU per request over the second's */
  cpu: number;
  throughput: number;
  /**
   * the median of the rounds' own ratios (both loaded in the same round, a few seconds apart):
   * shown beside the judged figure, as how much a slow minute of the machine moved it
   */
  'cpu-paired-rounds': number | null;
}

export function cpuRatio(of: Summary | undefined, to: Summary | undefined): Ratio | null {
  const a = of?.['server-cpu-us-per-request'];
  const b = to?.['server-cpu-us-per-request'];
  if (!of || !to || !a || !b) return null;
  const paired = of['cpu-per-round']
    .map((x, i) => (x && to['cpu-per-round'][i] ? x / to['cpu-per-round'][i]! : null))
    .filter((x): x is number => x !== null)
    .sort((x, y) => x - y);
  const middle =
    paired.length === 0 ? null : paired.length % 2 ? paired[(paired.length - 1) / 2] : (paired[paired.length / 2 - 1] + paired[paired.length / 2]) / 2;
  return { cpu: +(a / b).toFixed(2), throughput: +(of.rps / to.rps).toFixed(2), 'cpu-paired-rounds': middle === null ? null : +middle.toFixed(2) };
}

export interface Target {
  /** what is required, e.g. "health CPU per request <= 2 x bare Fastify's" */
  name: string;
  /** the figure as measured, e.g. "1.6 x (52 vs 32 µs)" */
  figure: string;
  /** null: not measured */
  met: boolean | null;
  /** a resident-memory target: judged on any run (a busy machine does not change what a process holds) */
  memory?: boolean;
}

/** "met" / "MISSED" on a valid run; "not judged" with what the figures say on a run that is not */
export function judge(targets: Target[], v: Validity): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of targets) {
    if (t.met === null) out[t.name] = 'not measured';
    else if (v.valid || t.memory) out[t.name] = `${t.figure}: ${t.met ? 'met' : 'MISSED'}`;
    else out[t.name] = `${t.figure}: not judged (run not valid; the figures say ${t.met ? 'met' : 'missed'})`;
  }
  return out;
}

export async function writeResults(path: string, results: Record<string, unknown>): Promise<void> {
  await writeFile(path, JSON.stringify(results, null, 2) + '\n');
}
