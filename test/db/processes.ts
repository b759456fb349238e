/** Test support for the database commands: real server and CLI processes on one PGlite directory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { TEST_JWT_SECRET } from '../support/system.js';

const STARTUP_TIMEOUT_MS = 120_000;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** SIGTERM, and the exit code */
  stop(): Promise<number | null>;
}

/** The environment of a test process on `database`: a PGlite directory or a postgres:// URL. */
export function databaseEnv(database: { pgliteDir: string } | { url: string }): Record<string, string> {
  const base: Record<string, string> = {
    ...(process.env as Record<string, string>),
    APP_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_CONSOLE: 'json',
    LOG_FILE: 'off',
    LOGIN_LIMIT_EMAIL: '0',
    LOGIN_LIMIT_ADDRESS: '0',
  };
  delete base.DATABASE_URL;
  delete base.PGLITE_DIR;
  return 'url' in database ? { ...base, DATABASE_URL: database.url } : { ...base, PGLITE_DIR: database.pgliteDir };
}

/** Starts `src/server.ts` and resolves once it listens; rejects (with its stderr) if it exits first. */
export function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the server did not start'));
    }, STARTUP_TIMEOUT_MS);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { id?: string; data?: { address?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.id === 'system/listening' && entry.data?.address) {
        clearTimeout(timer);
        const url = entry.data.address;
        resolve({
          child,
          url,
          exited,
          async stop() {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
  });
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point (a server or a CLI) to its end. */
export function runProcess(script: string, args: string[], env: Record<string, string>): Promise<CommandResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
