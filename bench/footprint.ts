/**
 * The embedded default's footprint: `npm start` as a first deployment runs it (no DATABASE_URL:
 * PGlite in a directory, the dev profile's defaults, no MAIL_URL, nothing optional configured),
 * on the compiled server with `npm start`'s node flags. Resident memory from /proc/<pid>/status:
 *
 *  - first start: the server's RSS once it answers health on a new directory (initdb ran in a
 *    child process), then it stops
 *  - restart on that directory (the everyday case): RSS after start, then after sign-ups from
 *    autocannon (each with its own address: autocannon's `[<id>]`), and the peak (VmHWM, or the highest VmRSS sampled every 100 ms when
 *    that is higher: the kernel updates VmHWM lazily)
 *
 * With BENCH_BASELINE=<dir> (and BENCH_BASELINE_FLAGS), `--footprint` measures that build too,
 * after this one, on a directory of its own: before/after, or a node flag's effect.
 *
 * Target: peak <= 250 MB (a 512 MB machine keeps room for the OS and a deploy's second copy).
 * `npm run bench -- --footprint` runs this part alone (no CPU scenarios: RSS figures hold on a
 * busy machine, CPU figures do not); the default and full runs end with it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { load, procStatusMb } from './measure.js';
import { startServer, type Running } from './servers.js';

export interface Footprint {
  'first-start-rss-mb': number | null;
  'start-rss-mb': number | null;
  'sign-ups': number;
  'sign-up-rps': number;
  'after-sign-ups-rss-mb': number | null;
  'peak-rss-mb': number | null;
}

/** the peak the embedded default may reach */
export const FOOTPRINT_PEAK_MAX_MB = 250;

/** `npm start`'s environment with nothing configured: only the port (set by startServer) and the directory differ */
function defaultEnv(pgliteDir: string): Record<string, string> {
  return {
    APP_ENV: 'dev',
    DATABASE_URL: '',
    MAIL_URL: '',
    PGLITE_DIR: pgliteDir,
    LOG_CONSOLE: 'off',
    // every sign-up comes from 127.0.0.1: its per-address limit would answer 429 after 20
    SIGNUP_LIMIT_ADDRESS: '0',
  };
}

/** RSS once the start-up's transient work settles (the first requests, the outbox's first poll) */
async function settledRss(server: Running): Promise<number | null> {
  await sleep(2000);
  return procStatusMb(server.pid, 'VmRSS');
}

export interface FootprintOptions {
  /** the compiled server (default `dist/server.js`; another build's `server.js` for a before/after) */
  script?: string;
  /** node flags after `npm start`'s */
  flags?: string[];
  connections?: number;
  /** seconds of sign-ups */
  duration?: number;
}

export async function footprint(tmp: string, options: FootprintOptions = {}): Promise<Footprint> {
  const dir = await mkdtemp(join(tmp, 'footprint-'));
  const start = () => startServer(options.script ?? 'dist/server.js', { env: defaultEnv(join(dir, 'pglite')), flags: options.flags });
  try {
    const first = await start();
    const firstStart = await settledRss(first);
    await first.stop();
    const server = await start();
    try {
      const started = await settledRss(server);
      // VmHWM is kept by the kernel lazily and can read below a VmRSS taken just before it: sampled too
      let sampledPeak = 0;
      const sampler = setInterval(() => {
        void procStatusMb(server.pid, 'VmRSS').then((mb) => {
          sampledPeak = Math.max(sampledPeak, mb ?? 0);
        });
      }, 100);
      const signUps = await load(`${server.url}/api/account/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'footprint-[<id>]@example.com', password: 'footprint password 123' }),
        idReplacement: true,
        connections: options.connections ?? 20,
        duration: options.duration ?? 10,
        pid: server.pid,
        expect: 201,
      });
      clearInterval(sampler);
      if (signUps.unexpected > 0 || signUps.errors > 0) {
        throw new Error(`bench: footprint sign-ups: ${signUps.unexpected} answers other than 201, ${signUps.errors} errors of ${signUps.requests}`);
      }
      const after = await procStatusMb(server.pid, 'VmRSS');
      const hwm = await procStatusMb(server.pid, 'VmHWM');
      return {
        'first-start-rss-mb': firstStart,
        'start-rss-mb': started,
        'sign-ups': signUps.requests,
        'sign-up-rps': signUps.rps,
        'after-sign-ups-rss-mb': after,
        'peak-rss-mb': hwm === null ? null : Math.max(hwm, sampledPeak, after ?? 0),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
