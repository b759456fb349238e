/** Shared by the database commands (migrate, db:dump, db:restore): config, `.env` in dev, exit codes. */
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config.js';

/** The server's configuration, read the way the server reads it (`.env` too when APP_ENV=dev). */
export async function commandConfig(): Promise<Config> {
  if ((process.env.APP_ENV ?? 'dev') === 'dev' && existsSync('.env')) (await import('dotenv')).config({ quiet: true });
  return loadConfig();
}

/** Runs a command: a failure prints its message (no stack: these are the user's errors) and exits 1. */
export async function runCommand(name: string, body: () => Promise<string | undefined>): Promise<void> {
  try {
    const done = await body();
    if (done) process.stderr.write(`${done}\n`);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : (err as Error).message;
    process.stderr.write(`${name} failed: ${message}\n`);
    process.exitCode = 1;
  }
}
