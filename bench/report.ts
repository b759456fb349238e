/**
 * The report: one line per load as it is measured, the medians over the rounds, how busy the
 * machine was, the ratios, the targets, and bench/results.json.
 *
 * Validity: a run is valid for targets only when no load of it was taken with the machine's
 * one-minute load average above its core count (before or during the load): above one
 * runnable task per core every server's CPU per request inflates, the small ones most, so
 * ratios drift toward 1 and a regression hides. A target is then reported as "met" or
 * "MISSED"; on a run that is not valid it is "not judged" with what the figures would say.
 */
import { writeFile } from 'node:fs/promises';
import { CORES, type Load, type MachineLoad } from './measure.js';

/** the median of each figure over the rounds, and the per-round figures beside it */
export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  unexpected: number;
  errors: number;
  'server-cpu-us-per-request': number | null;
  rounds: number;
  'cpu-per-round': Array<number | null>;
  'machine-per-round': MachineLoad[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function summarize(samples: Load[]): Summary {
  const pick = (f: (l: Load) => number) => median(samples.map(f));
  const cpu = samples.map((l) => l['server-cpu-us-per-request']).filter((x): x is number => typeof x === 'number');
  return {
    rps: pick((l) => l.rps), p50: pick((l) => l.p50), p99: pick((l) => l.p99),
    unexpected: samples.reduce((n, l) => n + l.unexpected, 0), errors: samples.reduce((n, l) => n + l.errors, 0),
    'server-cpu-us-per-request': cpu.length ? median(cpu) : null,
    rounds: samples.length, 'cpu-per-round': samples.map((l) => l['server-cpu-us-per-request']), 'machine-per-round': samples.map((l) => l.machine),
  };
}

const fmtLoad = (x: number | null) => (x === null ? '?' : x.toFixed(2));

/** one table row: requests/s, latency, the server's CPU per request, the machine's load, failures */
export function row(label: string, r: Load | Summary, machine?: MachineLoad): void {
  const cpu = r['server-cpu-us-per-request'] !== null ? `  cpu ${r['server-cpu-us-per-request']} µs/req` : '';
  const busy = machine ? `  load ${fmtLoad(machine['load-before'])}->${fmtLoad(machine['load-during'])}${machine['steal-percent'] ? ` steal ${machine['steal-percent']} %` : ''}${machine.saturated ? ' SATURATED' : ''}` : '';
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
  valid: boolean;
  verdict: string;
}

export function validity(machines: MachineLoad[]): Validity {
  const loads = machines.flatMap((m) => [m['load-before'], m['load-during']]).filter((x): x is number => x !== null);
  const steals = machines.map((m) => m['steal-percent']).filter((x): x is number => x !== null);
  const saturated = machines.filter((m) => m.saturated).length;
  const min = loads.length ? Math.min(...loads) : null;
  const max = loads.length ? Math.max(...loads) : null;
  const known = loads.length > 0;
  const valid = known && saturated === 0;
  const range = known ? `load average ${min!.toFixed(2)}–${max!.toFixed(2)} on ${CORES} cores` : 'load average not visible (not Linux)';
  return {
    cores: CORES, 'loads-measured': machines.length, 'loads-saturated': saturated,
    'load-average-min': min, 'load-average-max': max, 'steal-percent-max': steals.length ? Math.max(...steals) : null,
    valid,
    verdict: valid
      ? `valid for targets: ${range}, never above one runnable task per core`
      : known
        ? `NOT VALID for targets: ${saturated} of ${machines.length} loads ran with the load average above ${CORES} (${range}); the figures are inflated, read them as a trend only`
        : `NOT VALID for targets: ${range}`,
  };
}

/** a ratio of CPU per request, `of / to`, and throughput `of / to`, from two summaries */
export interface Ratio { cpu: number; throughput: number }

export function cpuRatio(of: Summary | undefined, to: Summary | undefined): Ratio | null {
  const a = of?.['server-cpu-us-per-request'];
  const b = to?.['server-cpu-us-per-request'];
  if (!of || !to || !a || !b) return null;
  return { cpu: +(a / b).toFixed(2), throughput: +(of.rps / to.rps).toFixed(2) };
}

export interface Target {
  /** what is required, e.g. "health CPU per request <= 2 x bare Fastify's" */
  name: string;
  /** the figure as measured, e.g. "1.6 x (52 vs 32 µs)" */
  figure: string;
  /** null: not measured */
  met: boolean | null;
}

/** "met" / "MISSED" on a valid run; "not judged" with what the figures say on a run that is not */
export function judge(targets: Target[], v: Validity): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of targets) {
    if (t.met === null) out[t.name] = 'not measured';
    else if (v.valid) out[t.name] = `${t.figure}: ${t.met ? 'met' : 'MISSED'}`;
    else out[t.name] = `${t.figure}: not judged (run not valid; the figures say ${t.met ? 'met' : 'missed'})`;
  }
  return out;
}

export async function writeResults(path: string, results: Record<string, unknown>): Promise<void> {
  await writeFile(path, JSON.stringify(results, null, 2) + '\n');
}
