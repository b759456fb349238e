/**
 * Plain-SQL dumps (pg_dump's format) of the configured database:
 * - PostgreSQL: the `pg_dump` client (its major version must be at least the server's);
 * - PGlite: pg_dump compiled to WASM (@electric-sql/pglite-tools) against the open instance.
 *   When a server holds the directory the dump is taken by that server, through its lock socket.
 */
import { spawn } from 'node:child_process';
import type { PGlite } from '@electric-sql/pglite';
import { DUMP_ARGS } from './dump-sql.js';

const SESSION_SETTINGS_SQL = "select name, setting from pg_catalog.pg_settings where source = 'session'";

/**
 * Dumps an open PGlite instance; the caller keeps every other user off it meanwhile.
 * pg_dump expects to end by disconnecting, which PGlite's one session never does: its
 * read-only snapshot transaction stays open (every later write would fail) and its session
 * settings (row_security, extra_float_digits, timeouts...) stay changed. Both are undone here.
 */
export async function dumpPglite(pglite: PGlite): Promise<string> {
  const { pgDump } = await import('@electric-sql/pglite-tools/pg_dump');
  const before = new Map((await pglite.query<{ name: string; setting: string }>(SESSION_SETTINGS_SQL)).rows.map((r) => [r.name, r.setting]));
  try {
    const file = await pgDump({ pg: pglite, args: DUMP_ARGS });
    return await file.text();
  } finally {
    if (pglite.isInTransaction()) await pglite.exec('rollback');
    for (const { name } of (await pglite.query<{ name: string }>(SESSION_SETTINGS_SQL)).rows) {
      const previous = before.get(name);
      if (previous === undefined) await pglite.query(`reset ${quoteIdent(name)}`);
      else await pglite.query('select pg_catalog.set_config($1, $2, false)', [name, previous]);
    }
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Runs `pg_dump` on a postgres:// URL; the password goes by environment, not the command line. */
export async function dumpPostgres(databaseUrl: string): Promise<string> {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env = { ...process.env, ...(password ? { PGPASSWORD: password } : {}) };
  const child = spawn('pg_dump', [...DUMP_ARGS, `--dbname=${url.toString()}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'ENOENT' ? new Error('pg_dump is not installed (or not on PATH): install the PostgreSQL client, e.g. apt-get install postgresql-client') : e,
      ),
    );
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`pg_dump failed (exit ${code}): ${err.trim()}`);
  return Buffer.concat(out).toString('utf8');
}
