/**
 * Test databases that start migrated. Every system a test starts runs the migrator, which here
 * finds nothing pending; a migration added later is applied as it would be in production.
 *
 * - PGlite (`memory://`): a fresh instance runs initdb in WebAssembly (4–6 s of CPU here), then
 *   every migration (1.5 s). It starts instead from an image of its data directory taken after
 *   both (`dumpDataDir`), in about a second.
 * - PostgreSQL: a test database is created from a template database that was migrated once
 *   (running the migrations takes ~1.4 s; copying the template a fraction of it).
 *
 * Both are named by a hash of the migrations' code (and, for the image, PGlite's version and
 * settings), and kept between test processes: the image in the temporary directory, the
 * template in the PostgreSQL server. A changed migration makes new ones.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PGLITE_SETTINGS } from '../../src/db/database.js';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { LevelFilter } from '../../src/logging/filter.js';
import { LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';

const quiet = new LogBackend(new LevelFilter([{ ns: '*', level: 'fatal' }]), [], createRedactor()).logger('saas.test');

function migrationsHash(...more: string[]): string {
  const hash = createHash('sha256');
  for (const extra of more) hash.update(extra);
  for (const [name, migration] of Object.entries(MIGRATIONS))
    hash
      .update(name)
      .update(String(migration.up))
      .update(String(migration.down ?? ''));
  return hash.digest('hex').slice(0, 16);
}

let image: Promise<Blob> | undefined;

async function makeImage(): Promise<Blob> {
  const require = createRequire(import.meta.url);
  const pgliteVersion = (JSON.parse(readFileSync(join(require.resolve('@electric-sql/pglite'), '../../package.json'), 'utf8')) as { version: string }).version;
  const path = join(tmpdir(), `saas-test-pglite-${migrationsHash(pgliteVersion, JSON.stringify(PGLITE_SETTINGS))}.tar`);
  const kept = await readFile(path).catch(() => undefined);
  if (kept) return new Blob([kept]);
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite({ postgresqlconf: PGLITE_SETTINGS });
  const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db, quiet);
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

/** The PGlite image, made once per process (or read from the temporary directory). */
export function memoryDatabaseImage(): Promise<Blob> {
  image ??= makeImage();
  return image;
}

const templates = new Map<string, Promise<string>>();

/**
 * The templates' name prefix. A copy of the project with other migrations (the generator's test
 * runs a generated resource's tests in one) sets its own, so that neither drops the other's
 * template while the other's tests copy it.
 */
const PREFIX = process.env.TEST_TEMPLATE_PREFIX ?? 't_tpl';
if (!/^[a-z][a-z_]{0,20}$/.test(PREFIX)) throw new Error(`TEST_TEMPLATE_PREFIX must be lower-case letters and underscores, got ${PREFIX}`);

async function makeTemplate(serverUrl: string): Promise<string> {
  const name = `${PREFIX}_${migrationsHash()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return name;
    // migrated under a name of its own, then renamed: the template's name appears only when
    // it is whole, and nobody is connected to it (a copy needs that)
    const building = `${name}_${process.pid}`;
    await admin.query(`drop database if exists ${building}`);
    await admin.query(`create database ${building}`);
    const url = new URL(serverUrl);
    url.pathname = `/${building}`;
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
    try {
      await migrateToLatest(db, quiet);
    } finally {
      await db.destroy();
    }
    try {
      await admin.query(`alter database ${building} rename to ${name}`);
    } catch (err) {
      // another test process finished first: its template is the same
      if ((err as { code?: string }).code !== '42P04') throw err;
      await admin.query(`drop database if exists ${building}`);
    }
    // the templates of migrations that have changed since
    const stale = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ $1 and datname <> $2`, [
      `^${PREFIX}_[0-9a-f]{16}$`,
      name,
    ]);
    for (const { datname } of stale.rows) await admin.query(`drop database if exists ${datname} with (force)`).catch(() => undefined);
    return name;
  } finally {
    await admin.end();
  }
}

/** The migrated template database on the server at `serverUrl`, made once (or found there). */
export function postgresTemplate(serverUrl: string): Promise<string> {
  let template = templates.get(serverUrl);
  if (!template) templates.set(serverUrl, (template = makeTemplate(serverUrl)));
  return template;
}
