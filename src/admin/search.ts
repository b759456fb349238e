/**
 * Prefix search with keyset pagination, fast on millions of rows (docs/admin.md has the plan):
 *
 * - A prefix is a range in the "C" collation: `[q, successor(q))`, where the successor raises
 *   q's last code point by one. Bytewise UTF-8 order is code point order, so the range holds
 *   exactly the strings that start with q, whatever the database's own collation, and an index
 *   on the column `collate "C"` reads it in order. The bounds are parameters (no LIKE pattern to
 *   escape, and a generic plan uses the index as well as a custom one).
 * - A search reads its matches in phases (e.g. email matches, then name matches that are not
 *   email matches), each from its own index in that index's order; a page takes what it needs
 *   from one phase and goes on to the next. The cursor names the phase and the last key read,
 *   so a page costs an index range read of `limit + 1` rows, however deep it is.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import { requestCoercion } from '../http/errors.js';

/** The exclusive upper bound of the strings that start with `prefix` (bytewise order); undefined when there is none. */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    let last = points.pop()! + 1;
    // no code points in the surrogate range: the next one after U+D7FF is U+E000
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000;
    if (last <= 0x10ffff) return String.fromCodePoint(...points, last);
  }
  return undefined;
}

export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
/** a timestamp with its microseconds, for a cursor: a Date would drop them and repeat or skip rows */
export const exactTime = (column: string) => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
/** an expression in the "C" collation (bytewise order) */
export const c = (expression: Expression<unknown> | ReturnType<typeof sql.ref>) => sql<string>`(${expression} collate "C")`;

/** `[lo, hi)` of a prefix, lower-cased (emails are stored lower-cased; names are compared lower-cased). */
export function prefixRange(q: string): { lo: string; hi: string | undefined } {
  const lo = q.trim().toLowerCase();
  return { lo, hi: prefixEnd(lo) };
}

export const inRange = (key: ReturnType<typeof c>, range: { lo: string; hi: string | undefined }) =>
  range.hi === undefined ? sql<SqlBool>`${key} >= ${range.lo}` : sql<SqlBool>`${key} >= ${range.lo} and ${key} < ${range.hi}`;

/** Where a page ends: a phase, and the key (and id) of the last row read in it; no key: the phase's start. */
export interface Cursor {
  p: string;
  k?: string;
  i?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY_MAX = 400;

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

/** The cursor a page handed out; anything else is a 400 `request-coercion` on `/cursor`, never an error from SQL. */
export const refuseCursor = () => requestCoercion('query', [{ path: '/cursor', message: 'is not a cursor this service issued' }]);

export function decodeCursor(raw: string, phases: readonly string[]): Cursor {
  const refuse = refuseCursor;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  const c = value as Partial<Cursor> | null;
  if (typeof c !== 'object' || c === null || Array.isArray(c) || typeof c.p !== 'string' || !phases.includes(c.p)) throw refuse();
  if (Object.keys(c).some((k) => !['p', 'k', 'i'].includes(k))) throw refuse();
  if (c.k !== undefined && (typeof c.k !== 'string' || c.k.length > KEY_MAX)) throw refuse();
  if (c.i !== undefined && (typeof c.i !== 'string' || !UUID.test(c.i))) throw refuse();
  return { p: c.p, ...(c.k !== undefined ? { k: c.k } : {}), ...(c.i !== undefined ? { i: c.i } : {}) };
}

/**
 * A page's cursor (undefined: the first page) for these phases. A key without an id is refused
 * but in `uniqueKeyPhase`, the one phase whose keys are unique (its cursors carry no id).
 */
export function pageCursor(raw: string | undefined, phases: ReadonlyArray<{ id: string }>, uniqueKeyPhase: string): Cursor | undefined {
  if (raw === undefined) return undefined;
  const cursor = decodeCursor(
    raw,
    phases.map((p) => p.id),
  );
  if (cursor.p !== uniqueKeyPhase && cursor.k !== undefined && cursor.i === undefined) throw refuseCursor();
  return cursor;
}

/** One phase of a search: rows in its own order, after a key (and id) of that order. */
export interface Phase<Row> {
  id: string;
  /** at most `limit` rows, in the phase's order, after `after` (from the start without) */
  read(limit: number, after: { k: string; i?: string } | undefined): Promise<Row[]>;
  /** the key (and id, where the key is not unique) of a row, for the cursor */
  keyOf(row: Row): { k: string; i?: string };
}

/**
 * One page of `limit` rows across the phases, from `cursor` on; `next` is the cursor of the
 * next page, undefined after the last. Each phase is asked for one row more than the page still
 * needs, so a page that ends exactly where a phase does knows whether anything follows.
 */
export async function keysetPage<Row>(phases: ReadonlyArray<Phase<Row>>, limit: number, cursor: Cursor | undefined): Promise<{ rows: Row[]; next?: Cursor }> {
  const start = cursor ? phases.findIndex((p) => p.id === cursor.p) : 0;
  const rows: Row[] = [];
  for (let index = Math.max(start, 0); index < phases.length; index++) {
    const phase = phases[index];
    const after = index === start && cursor?.k !== undefined ? { k: cursor.k, ...(cursor.i ? { i: cursor.i } : {}) } : undefined;
    const wanted = limit - rows.length;
    const read = await phase.read(wanted + 1, after);
    if (read.length > wanted) {
      rows.push(...read.slice(0, wanted));
      const last = wanted > 0 ? read[wanted - 1] : undefined;
      return { rows, next: last ? { p: phase.id, ...phase.keyOf(last) } : { p: phase.id } };
    }
    rows.push(...read);
  }
  return { rows };
}
