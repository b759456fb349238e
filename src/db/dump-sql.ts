/**
 * Plain-SQL dumps that move both ways between PGlite (PostgreSQL 18 in WASM) and PostgreSQL
 * servers (15 and newer). Dumps are always taken with INSERT statements, never COPY ... FROM
 * stdin: PGlite cannot read COPY data from a script, and a script of statements can be sent
 * to either database through its ordinary client.
 */

/** pg_dump options every dump uses: INSERTs in batches, no owners and grants (roles differ). */
export const DUMP_ARGS = ['--rows-per-insert=100', '--no-owner', '--no-privileges', '--encoding=UTF8'];

export class DumpFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DumpFormatError';
  }
}

/**
 * Prepares a pg_dump script for a target database:
 * - drops the `\restrict` / `\unrestrict` lines pg_dump (17.6+, 15.14+) writes at the start and
 *   end: they are psql meta-commands, not SQL;
 * - refuses any other meta-command (a dump with COPY data, or `\connect`) with a clear message;
 * - drops the preamble's `SET name = ...;` lines for settings the target does not have (a
 *   PGlite dump says `SET transaction_timeout = 0`, which PostgreSQL < 17 rejects). Only the
 *   preamble (before the first object) is filtered: a line in the data is never touched.
 */
export function prepareDump(script: string, targetSettings: ReadonlySet<string>): string {
  if (!/^--\s*\n--\s*PostgreSQL database dump/m.test(script.slice(0, 400))) {
    throw new DumpFormatError('not a plain-SQL pg_dump file (it does not start with "-- PostgreSQL database dump")');
  }
  const lines = script.split('\n');
  const firstObject = lines.findIndex((line) => line.startsWith('-- Name: ') || line.startsWith('-- Data for Name: '));
  const preambleEnd = firstObject < 0 ? lines.length : firstObject;
  // pg_dump's own trailer starts with this comment; only what follows it may be \unrestrict
  const trailerStart = lines.lastIndexOf('-- PostgreSQL database dump complete');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const inPreamble = i < preambleEnd;
    const inTrailer = trailerStart >= 0 && i > trailerStart;
    if ((inPreamble && /^\\restrict \S+\s*$/.test(line)) || (inTrailer && /^\\unrestrict \S+\s*$/.test(line))) continue;
    if (inPreamble || inTrailer) {
      if (line.startsWith('\\'))
        throw new DumpFormatError(
          `the dump contains the psql meta-command "${line.split(' ')[0]}" (take it with npm run db:dump, which writes INSERT statements)`,
        );
      const set = /^SET\s+([a-z_.]+)\s*=/i.exec(line);
      if (set && !targetSettings.has(set[1]!.toLowerCase())) continue;
    } else if (/^COPY .* FROM stdin;$/.test(line)) {
      throw new DumpFormatError(
        'the dump contains COPY ... FROM stdin data, which only psql can load: take it with npm run db:dump, which writes INSERT statements',
      );
    }
    kept.push(line);
  }
  return kept.join('\n');
}

/** SQL listing the relations outside PostgreSQL's own schemas: none means the database is empty. */
export const USER_RELATIONS_SQL = `select n.nspname || '.' || c.relname as name
  from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
 where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
 order by 1 limit 5`;

export const SETTINGS_SQL = 'select name from pg_catalog.pg_settings';

/** Makes a non-empty database empty again (restore --force): its public schema, recreated. */
export const CLEAR_SQL = 'drop schema if exists public cascade; create schema public;';

export function notEmptyMessage(target: string, relations: string[]): string {
  return (
    `${target} is not empty (it has ${relations.join(', ')}${relations.length >= 5 ? ', ...' : ''}). ` +
    'Restore into an empty database, or pass --force to drop everything in its public schema first.'
  );
}
