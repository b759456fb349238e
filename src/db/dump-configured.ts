/**
 * `npm run db:dump`'s source: the configured database, whichever it is (dump.ts holds the
 * dumpers; this file joins them to opening a PGlite directory, which database.ts owns).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { openPgliteDirectory } from './database.js';
import { dumpPglite, dumpPostgres } from './dump.js';
import { DirectoryLockedError, requestDump } from './lock.js';

/**
 * Dumps the configured database. For a PGlite directory held by a running server the server
 * takes the dump; otherwise this process takes the directory's lock and opens it itself.
 */
export async function dumpConfiguredDatabase(config: Config): Promise<string> {
  if (config.databaseUrl?.startsWith('postgres')) return dumpPostgres(config.databaseUrl);
  if (config.databaseUrl === 'memory://') throw new Error('DATABASE_URL=memory:// is an in-memory database: there is nothing on disk to dump');
  if (!existsSync(join(config.pgliteDir, 'PG_VERSION'))) throw new Error(`${config.pgliteDir} holds no PGlite database (PGLITE_DIR)`);
  let opened: Awaited<ReturnType<typeof openPgliteDirectory>>;
  try {
    opened = await openPgliteDirectory(config.pgliteDir);
  } catch (err) {
    if (err instanceof DirectoryLockedError) return requestDump(config.pgliteDir);
    throw err;
  }
  try {
    return await dumpPglite(opened.pglite);
  } finally {
    await opened.pglite.close();
    await opened.lock.release();
  }
}
