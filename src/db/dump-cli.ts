/**
 * `npm run db:dump -- <file>`: writes a plain-SQL dump of the configured database to <file>
 * (written beside it first and renamed, so a failed dump never leaves half a file).
 */
import '../runtime/node-version.js';
import { rename, rm, writeFile } from 'node:fs/promises';
import { commandConfig, runCommand } from './cli.js';
import { dumpConfiguredDatabase } from './dump-configured.js';

await runCommand('db:dump', async () => {
  const [file, ...rest] = process.argv.slice(2);
  if (!file || rest.length > 0 || file.startsWith('-')) throw new Error('usage: npm run db:dump -- <file.sql>');
  const config = await commandConfig();
  const dump = await dumpConfiguredDatabase(config);
  const partial = `${file}.partial-${process.pid}`;
  try {
    // never through a link someone placed at the name (flag wx: create, and only if absent)
    await writeFile(partial, dump, { mode: 0o600, flag: 'wx' });
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
  return `Dumped the ${config.databaseUrl ? 'PostgreSQL' : `PGlite (${config.pgliteDir})`} database to ${file} (${dump.length} bytes)`;
});
