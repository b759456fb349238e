/**
 * The real server as a child process, for what only a process shows: its standard streams'
 * readers going away, its CPU and resident memory, how it starts without a database and how it
 * stops on SIGTERM. Start-up is judged by the liveness probe, so it works whatever the child's
 * standard output is.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './net.js';

export interface ChildServer {
  child: ChildProcess;
  port: number;
  /** a temporary directory of its own (for LOG_FILE and the like), removed by dispose */
  dir: string;
  exited: Promise<number | null>;
  /** what it wrote on standard error, when that is a pipe the test reads */
  stderr(): string;
  dispose(): Promise<void>;
}

/** A production configuration a child server can start with: no database to set up, no mail server needed to start. */
export const PROD_CHILD_ENV = {
  APP_ENV: 'prod',
  JWT_SECRET: 'x'.repeat(40),
  MAIL_URL: 'smtp://127.0.0.1:2525',
  DATABASE_URL: 'memory://',
} as const;

export interface ChildServerOptions {
  /** extra environment; APP_ENV=test, a JWT secret and PORT are set */
  env?: Record<string, string>;
  stdio?: StdioOptions;
  /** wait until /api/health/live answers (default true) */
  waitUntilLive?: boolean;
  /** the project directory to run (default: this one); a copy with a generated resource, say */
  cwd?: string;
}

export async function startChildServer(options: ChildServerOptions = {}): Promise<ChildServer> {
  const dir = await mkdtemp(join(tmpdir(), 'saas-child-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      APP_ENV: 'test',
      JWT_SECRET: 'x'.repeat(40),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_CONSOLE: 'off',
      DATABASE_URL: 'memory://',
      ...options.env,
    },
    stdio: options.stdio ?? ['ignore', 'ignore', 'pipe'],
    cwd: options.cwd,
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server: ChildServer = {
    child,
    port,
    dir,
    exited,
    stderr: () => stderr,
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (options.waitUntilLive ?? true) {
    try {
      await waitFor(
        async () => (await get(port, '/api/health/live')).status === 200,
        120_000,
        () => child.exitCode !== null,
      );
    } catch (err) {
      await server.dispose();
      throw new Error(`${(err as Error).message}; its standard error: ${stderr.slice(-2000)}`);
    }
  }
  return server;
}

/** Asks `check` every 100 ms until it holds; throws after `timeoutMs` or once `gaveUp` holds. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, gaveUp: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (gaveUp()) throw new Error('the process ended while it was waited for');
    await sleep(100);
  }
  throw new Error(`not reached within ${timeoutMs} ms`);
}

export interface Answer {
  status?: number;
  body: string;
  error?: string;
}

/** One request on a new connection; never rejects. */
export function get(
  port: number,
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', agent: false, headers: { accept: 'application/json', ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode, body }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ body, error: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ body: '', error: err.code ?? err.message }));
    req.setTimeout(options.timeoutMs ?? 20_000, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.end(options.body);
  });
}

/** `count` requests, `concurrency` at a time; the statuses (or error codes) by how often each came. */
export async function load(port: number, path: string, count: number, concurrency = 10): Promise<Map<number | string, number>> {
  const tally = new Map<number | string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const answer = await get(port, path);
        const key = answer.status ?? answer.error ?? 'none';
        tally.set(key, (tally.get(key) ?? 0) + 1);
      }
    }),
  );
  return tally;
}

/** CPU seconds (user + system) the process has used, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command's closing parenthesis; utime and stime are the 12th and 13th
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident memory of the process, MB, from /proc. */
export function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Sends SIGTERM; the exit code, or 'still running' after `withinMs`. */
export async function terminate(server: ChildServer, withinMs: number): Promise<number | null | 'still running'> {
  server.child.kill('SIGTERM');
  return Promise.race([server.exited, sleep(withinMs, 'still running' as const, { ref: false })]);
}
