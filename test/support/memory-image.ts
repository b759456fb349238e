/**
 * The data directory an in-memory test database starts from: PGlite after initdb and every
 * migration, dumped once. A fresh `memory://` PGlite runs initdb in WebAssembly (4–6 s of CPU
 * here) and then the migrations (1.5 s); loaded from the image it is ready in about one second,
 * and the suite starts a hundred systems. Each system still runs the migrator (it finds
 * nothing pending), so a migration added later is applied as it would be in production.
 *
 * The image is kept in the temporary directory between test processes, named by a hash of the
 * migrations' code, PGlite's version and its settings: a changed migration makes a new one.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import { PGLITE_SETTINGS } from '../../src/db/database.js';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { LevelFilter } from '../../src/logging/filter.js';
import { LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';

let image: Promise<Blob> | undefined;

function imageKey(): string {
  const require = createRequire(import.meta.url);
  const pgliteVersion = (JSON.parse(readFileSync(join(require.resolve('@electric-sql/pglite'), '../../package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256').update(pgliteVersion).update(JSON.stringify(PGLITE_SETTINGS));
  for (const [name, migration] of Object.entries(MIGRATIONS)) hash.update(name).update(String(migration.up)).update(String(migration.down ?? ''));
  return hash.digest('hex').slice(0, 16);
}

async function makeImage(): Promise<Blob> {
  const path = join(tmpdir(), `saas-test-pglite-${imageKey()}.tar`);
  const kept = await readFile(path).catch(() => undefined);
  if (kept) return new Blob([kept]);
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite({ postgresqlconf: PGLITE_SETTINGS });
  const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
  try {
    const quiet = new LogBackend(new LevelFilter([{ ns: '*', level: 'fatal' }]), [], createRedactor());
    await migrateToLatest(db, quiet.logger('saas.test'));
    const dump = await pglite.dumpDataDir('none');
    // written aside, then renamed: a test process beside this one reads a whole image or none
    const partial = `${path}.${process.pid}`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, path);
    return dump;
  } finally {
    await db.destroy();
  }
}

/** The image, made once per process (or read from the temporary directory). */
export function memoryDatabaseImage(): Promise<Blob> {
  image ??= makeImage();
  return image;
}
