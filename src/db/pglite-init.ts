/**
 * Creating a PGlite directory runs initdb, which PGlite does in the opening process with a
 * second WebAssembly instance; the memory it takes (~300 MB more resident, measured) is not
 * given back for the life of the process. A new directory is therefore initialised by a
 * short-lived child process, and the server then opens the finished directory, as it does on
 * every later start (docs/performance.md, "The embedded database's footprint").
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** True when `dir` holds no database yet (PostgreSQL writes PG_VERSION when initdb is done). */
export function needsInitdb(dir: string): boolean {
  return !existsSync(join(dir, 'PG_VERSION'));
}

/**
 * Runs initdb for `dir` in a child process with the given settings. The caller holds the
 * directory's lock, so the child opens it without taking one.
 */
export async function initializePgliteDirectory(dir: string, settings: readonly string[]): Promise<void> {
  const pgliteUrl = import.meta.resolve('@electric-sql/pglite');
  const script = `import { PGlite } from ${JSON.stringify(pgliteUrl)};
const db = new PGlite({ dataDir: ${JSON.stringify(dir)}, postgresqlconf: ${JSON.stringify(settings)} });
await db.waitReady;
await db.close();`;
  try {
    await run(process.execPath, ['--liftoff-only', '--input-type=module', '-e', script], { timeout: 120_000, maxBuffer: 4 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? '')
      .trim()
      .split('\n')
      .slice(-3)
      .join(' ');
    throw new Error(`Creating the embedded database in ${dir} failed${stderr ? `: ${stderr}` : ''}`);
  }
}
