/**
 * Loads a plain-SQL dump (npm run db:dump) into the configured database, which must be empty
 * unless `force` is given. The whole script runs in one transaction: a failed restore leaves the
 * target as it was. Migrations are not run first: the dump carries the tables and the
 * `kysely_migration` table, so the server starting on it finds every migration applied.
 */
import pg from 'pg';
import type { Config } from '../config.js';
import { CLEAR_SQL, notEmptyMessage, prepareDump, SETTINGS_SQL, USER_RELATIONS_SQL } from './dump-sql.js';

export interface RestoreOptions {
  /** drop everything in the target's public schema first */
  force?: boolean;
}

/** What a restore needs of a database: one session that runs a script. */
interface Session {
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  exec(script: string): Promise<void>;
}

export async function restoreConfiguredDatabase(config: Config, dump: string, options: RestoreOptions = {}): Promise<void> {
  if (config.databaseUrl?.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: config.databaseUrl });
    await client.connect();
    try {
      const target = `The PostgreSQL database ${describeUrl(config.databaseUrl)}`;
      await restore(target, dump, options, {
        rows: async (sql) => (await client.query<Record<string, unknown>>(sql)).rows,
        exec: async (script) => {
          await client.query(script);
        },
      });
    } finally {
      await client.end();
    }
    return;
  }
  if (config.databaseUrl === 'memory://') throw new Error('DATABASE_URL=memory:// is an in-memory database: a restore into it would be lost at once');
  const { openPgliteDirectory } = await import('./database.js');
  const { pglite, lock } = await openPgliteDirectory(config.pgliteDir);
  try {
    await restore(`The PGlite directory ${lock.dir}`, dump, options, {
      rows: async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
      exec: async (script) => {
        await pglite.exec(script);
      },
    });
  } finally {
    await pglite.close();
    await lock.release();
  }
}

async function restore(target: string, dump: string, options: RestoreOptions, session: Session): Promise<void> {
  const settings = new Set((await session.rows(SETTINGS_SQL)).map((r) => String(r.name).toLowerCase()));
  const script = prepareDump(dump, settings);
  const relations = (await session.rows(USER_RELATIONS_SQL)).map((r) => String(r.name));
  if (relations.length > 0 && !options.force) throw new Error(notEmptyMessage(target, relations));
  await session.exec('begin');
  try {
    if (relations.length > 0) await session.exec(CLEAR_SQL);
    await session.exec(script);
    await session.exec('commit');
  } catch (err) {
    await session.exec('rollback').catch(() => undefined);
    throw new Error(`The restore failed and was rolled back: ${(err as Error).message}`);
  }
}

/** host/database without the credentials */
function describeUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}
