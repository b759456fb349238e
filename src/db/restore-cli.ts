/**
 * `npm run db:restore -- <file> [--force]`: loads a dump from `npm run db:dump` into the
 * configured database, which must be empty (--force drops what its public schema holds).
 */
import '../runtime/node-version.js';
import { readFile } from 'node:fs/promises';
import { commandConfig, runCommand } from './cli.js';
import { restoreConfiguredDatabase } from './restore.js';

await runCommand('db:restore', async () => {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const files = args.filter((a) => a !== '--force');
  if (files.length !== 1 || files[0]!.startsWith('-')) throw new Error('usage: npm run db:restore -- <file.sql> [--force]');
  const file = files[0]!;
  const config = await commandConfig();
  const dump = await readFile(file, 'utf8');
  await restoreConfiguredDatabase(config, dump, { force });
  return `Restored ${file} into the ${config.databaseUrl ? 'PostgreSQL' : `PGlite (${config.pgliteDir})`} database`;
});
