/**
 * A pg client that sends every parameterised query as a named prepared statement: PostgreSQL
 * parses and plans each distinct SQL text once per connection instead of on every execution.
 * Kysely generates a handful of texts (one per query shape), so the set stays small; past
 * `MAX_NAMED_TEXTS` distinct texts, new ones go unnamed, as before.
 *
 * Measured (docs/performance.md): PostgreSQL's CPU for `GET /api/account/me` halves. The
 * pipelined driver also keeps what pg makes of each named statement's rows (`withCachedRowShape`).
 *
 * A table changed by another instance's migration while this one runs invalidates a statement
 * that selects `*` from it ("cached plan must not change result type"). Outside a transaction
 * the query is re-sent once under a fresh name; inside one the error stands, as the transaction
 * is already aborted, and the next transaction uses the fresh name.
 */
import pg from 'pg';

const MAX_NAMED_TEXTS = 1000;
/** PostgreSQL's `feature_not_supported`, raised when a prepared plan's result type changed. */
const CACHED_PLAN_CHANGED = '0A000';

let generation = 0;
const names = new Map<string, string>();

/** The name a parameterised text is prepared under (shared by every connection of the process). */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_TEXTS) {
    name = `k${generation}_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/**
 * True when `err` says a prepared statement's plan no longer fits its table. Forgets every name
 * then, so the next execution of each text prepares it again under a fresh one.
 */
export function planChanged(err: unknown): boolean {
  if ((err as { code?: string } | null)?.code !== CACHED_PLAN_CHANGED) return false;
  generation++;
  names.clear();
  shapes.clear();
  return true;
}

/**
 * What pg makes of a statement's row description: the fields, a parser per field and the empty
 * row that each row is copied from. pg rebuilds them for every result (PostgreSQL describes the
 * rows anew with every execution), which was ~5 µs of a `GET /api/account/me` sampled
 * (docs/performance.md, round 6): a dictionary-mode object per result, copied, and a type
 * parser looked up per column. A named statement's rows have one shape, so it is built once.
 */
interface RowShape {
  fields: pg.FieldDef[];
  parsers: unknown[];
  empty: Record<string, null>;
}

/** by statement name; cleared with the names when a plan changes */
const shapes = new Map<string, RowShape>();

const sameFields = (a: readonly pg.FieldDef[], b: readonly pg.FieldDef[]) =>
  a.length === b.length && a.every((f, i) => f.name === b[i].name && f.dataTypeID === b[i].dataTypeID && f.format === b[i].format);

/** pg's Result (exported at runtime, not in its types): the fields it keeps while reading a result */
interface PgResult {
  fields: pg.FieldDef[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
  addFields(fields: pg.FieldDef[]): void;
}
const PgResult = (pg as unknown as { Result: new (rowMode?: string) => PgResult }).Result;

/** A Result whose row description is taken from the shape its statement had last time. */
class NamedStatementResult extends PgResult {
  constructor(private readonly statement: string) {
    super();
  }

  override addFields(fields: pg.FieldDef[]): void {
    const shape = shapes.get(this.statement);
    if (shape !== undefined && sameFields(shape.fields, fields)) {
      this.fields = shape.fields;
      this._parsers = shape.parsers;
      this._prebuiltEmptyResultObject = shape.empty;
      return;
    }
    super.addFields(fields);
    if (fields.length > 0 && shapes.size < MAX_NAMED_TEXTS) {
      shapes.set(this.statement, { fields, parsers: this._parsers!, empty: this._prebuiltEmptyResultObject! });
    }
  }
}

/** Makes a named statement's query read its rows with the statement's cached shape. */
export function withCachedRowShape(query: pg.Query, statement: string): pg.Query {
  const internals = query as unknown as { _result: PgResult; _results: PgResult };
  internals._result = internals._results = new NamedStatementResult(statement);
  return query;
}

type QueryResult = pg.QueryResult<Record<string, unknown>>;

/** A pooled client (transactions) preparing its statements; see the file comment. */
export class PreparedStatementClient extends pg.Client {}

// Assigned rather than declared, so callers keep pg's overloads. Kysely calls query(text,
// values) and expects a promise; every other form (configs, cursors, callbacks) goes to pg as is.
const send = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => Promise<QueryResult>;
PreparedStatementClient.prototype.query = function query(this: PreparedStatementClient, ...args: unknown[]) {
  const [text, values, callback] = args;
  if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
    return send.apply(this, args);
  }
  const name = statementName(text);
  if (name === undefined) return send.call(this, text, values);
  // pg keeps the status of PostgreSQL's last ReadyForQuery: I idle, T in a transaction, E failed
  const idleBefore = this.getTransactionStatus() !== 'T' && this.getTransactionStatus() !== 'E';
  return send.call(this, { name, text, values }).catch((err: unknown) => {
    if (!planChanged(err) || !idleBefore) throw err;
    return send.call(this, { name: statementName(text), text, values });
  });
} as typeof pg.Client.prototype.query;
