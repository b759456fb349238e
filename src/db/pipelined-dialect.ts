/**
 * Kysely over PostgreSQL with single statements pipelined: every query outside a transaction
 * goes, without waiting for a free connection, to one of a few shared connections in pg's
 * pipeline mode, where the statements of concurrent requests are written and read in batches
 * (fewer system calls, no pool checkout). A transaction takes a connection of its own from the
 * pool at `begin` and keeps it to `commit`/`rollback`, so no other request's statement can run
 * inside it. Measured in docs/performance.md.
 *
 * Each pipelined statement carries its own Sync, so an error (a unique violation, ...) fails
 * only its own statement. A shared connection that drops fails the statements on it with pg's
 * "Connection terminated" (answered 503 by the HTTP pipeline) and is replaced by the next
 * statement; one that stops answering is closed after `stallTimeoutMs`.
 */
import {
  IdentifierNode,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  RawNode,
  createQueryId,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { planChanged, statementName, withCachedRowShape } from './prepared-client.js';

export interface PipelinedDialectOptions {
  /** settings of the shared connections (pipeline mode is switched on here) */
  client: pg.ClientConfig;
  /** how many shared connections single statements are spread over */
  sharedConnections: number;
  /** connections for transactions */
  pool: pg.Pool;
  /** send parameterised statements as named prepared statements */
  preparedStatements: boolean;
  /** a shared connection with statements outstanding and no answer for this long is closed */
  stallTimeoutMs: number;
  /** a shared connection opened (with its number) or lost */
  onConnect?(client: pg.Client, slot: number): void;
  onConnectionError?(err: Error, slot: number): void;
}

type Rows = Record<string, unknown>;
type Callback = (err: Error | null, result: pg.QueryResult<Rows>) => void;

function toKysely<R>(result: pg.QueryResult<Rows>): QueryResult<R> {
  const { command } = result;
  const affected = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return { rows: (result.rows ?? []) as R[], numAffectedRows: affected ? BigInt(result.rowCount ?? 0) : undefined };
}

/** statements sent on one client and not yet answered, and when the last answer (or first send) was seen */
interface Progress {
  outstanding: number;
  lastProgress: number;
}

/** One shared, pipelined connection; replaced by a new one when it drops. */
class SharedConnection {
  private client: pg.Client | undefined;
  private ready = false;
  private opening: Promise<pg.Client> | undefined;
  /** per client, so the late failures of a lost client do not count against its replacement */
  private progress: Progress = { outstanding: 0, lastProgress: 0 };

  constructor(
    private readonly options: PipelinedDialectOptions,
    private readonly slot: number,
  ) {}

  send(text: string, values: readonly unknown[], callback: Callback): void {
    if (this.ready) this.write(this.client!, text, values, callback);
    else
      this.open().then(
        (client) => this.write(client, text, values, callback),
        (err: Error) => callback(err, undefined as never),
      );
  }

  private write(client: pg.Client, text: string, values: readonly unknown[], callback: Callback): void {
    const progress = this.progress;
    if (progress.outstanding++ === 0) progress.lastProgress = Date.now();
    this.cork(client);
    const done: Callback = (err, result) => {
      progress.outstanding--;
      progress.lastProgress = Date.now();
      callback(err, result);
    };
    const name = this.options.preparedStatements && values.length > 0 ? statementName(text) : undefined;
    client.query(
      this.query(
        text,
        values,
        name,
        name === undefined
          ? done
          : (err, result) => {
              // a table changed under a prepared statement (another instance's migration): prepare anew
              if (err && planChanged(err)) client.query(this.query(text, values, statementName(text), done));
              else done(err, result);
            },
      ),
    );
  }

  /**
   * A pg Query made from the text, not from a config object: pg copies a config object through
   * its property descriptors (~2 µs a statement, docs/performance.md).
   */
  private query(text: string, values: readonly unknown[], name: string | undefined, callback: Callback): pg.Query {
    const query = new pg.Query(text, values as unknown[], callback as never);
    if (name === undefined) return query;
    (query as unknown as { name: string }).name = name;
    return withCachedRowShape(query, name);
  }

  /**
   * pg writes each statement with a `writev` of its own (a system call, ~10 µs here). Held
   * corked until the event loop has run every callback of this turn, the statements of all the
   * requests that arrived together leave in one `writev`.
   */
  private corked: { uncork(): void } | undefined;
  private readonly uncork = () => {
    const stream = this.corked;
    this.corked = undefined;
    stream?.uncork();
  };

  private cork(client: pg.Client): void {
    if (this.corked) return;
    const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    stream.cork();
    this.corked = stream;
    setImmediate(this.uncork);
  }

  private open(): Promise<pg.Client> {
    if (this.opening !== undefined) return this.opening;
    const client = new pg.Client({ ...this.options.client, pipeline: true });
    const lost = (err: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.ready = false;
      this.opening = undefined;
      this.progress = { outstanding: 0, lastProgress: 0 };
      this.options.onConnectionError?.(err, this.slot);
    };
    // an unheard 'error' would crash the process; pg fails the statements on the connection itself
    client.on('error', lost);
    client.on('end', () => lost(new Error('Connection terminated')));
    this.client = client;
    this.opening = client.connect().then(
      () => {
        if (this.client === client) {
          this.ready = true;
          this.options.onConnect?.(client, this.slot);
        }
        return client;
      },
      (err: Error) => {
        lost(err);
        client.end().catch(() => undefined);
        throw err;
      },
    );
    return this.opening;
  }

  /** closes the connection when statements are outstanding and nothing came back for too long */
  checkStalled(now: number): void {
    const { outstanding, lastProgress } = this.progress;
    if (this.ready && outstanding > 0 && now - lastProgress > this.options.stallTimeoutMs) {
      const client = this.client!;
      this.options.onConnectionError?.(new Error(`No answer for ${this.options.stallTimeoutMs} ms`), this.slot);
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.ready = false;
    this.opening = undefined;
    // pg waits for the statements already written, then says goodbye
    if (client) await client.end().catch(() => undefined);
  }
}

/**
 * What Kysely holds between acquire and release: statements go to the shared connections until
 * `begin` pins a pooled connection of its own.
 */
class PipelinedConnection implements DatabaseConnection {
  pinned: pg.PoolClient | undefined;

  constructor(private readonly shared: SharedConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.pinned) return this.pinned.query(query.sql, query.parameters as unknown[]).then(toKysely<R>);
    return new Promise((resolve, reject) => {
      this.shared.send(query.sql, query.parameters, (err, result) => (err ? reject(err) : resolve(toKysely<R>(result))));
    });
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('The pipelined PostgreSQL driver does not stream query results');
  }
}

class PipelinedDriver implements Driver {
  private readonly shared: SharedConnection[];
  private next = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly options: PipelinedDialectOptions) {
    this.shared = Array.from({ length: Math.max(1, options.sharedConnections) }, (_, i) => new SharedConnection(options, i));
  }

  async init(): Promise<void> {
    const every = Math.max(100, Math.min(1000, this.options.stallTimeoutMs / 4));
    this.watchdog = setInterval(() => {
      const now = Date.now();
      for (const connection of this.shared) connection.checkStalled(now);
    }, every);
    this.watchdog.unref();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const shared = this.shared[this.next];
    this.next = (this.next + 1) % this.shared.length;
    return new PipelinedConnection(shared);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const conn = connection as PipelinedConnection;
    conn.pinned = await this.options.pool.connect();
    const mode = [settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : '', settings.accessMode ? settings.accessMode : '']
      .filter(Boolean)
      .join(' ');
    try {
      await conn.pinned.query(mode ? `begin ${mode}` : 'begin');
    } catch (err) {
      this.unpin(conn, err);
      throw err;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.endTransaction(connection as PipelinedConnection, 'commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.endTransaction(connection as PipelinedConnection, 'rollback');
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('savepoint', name), createQueryId()));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('rollback to', name), createQueryId()));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('release', name), createQueryId()));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // a transaction whose commit or rollback never ran (Kysely always runs one) still gives its
    // connection back, destroyed, so no open transaction returns to the pool
    const conn = connection as PipelinedConnection;
    if (conn.pinned) this.unpin(conn, new Error('Transaction connection released without commit or rollback'));
  }

  async destroy(): Promise<void> {
    clearInterval(this.watchdog);
    await Promise.all(this.shared.map((c) => c.close()));
    await this.options.pool.end();
  }

  private async endTransaction(conn: PipelinedConnection, statement: 'commit' | 'rollback'): Promise<void> {
    const client = conn.pinned;
    // Kysely rolls back after a failed commit (a deferred constraint refused at commit): the
    // commit gave the connection back already, and its error is the one to report
    if (!client && statement === 'rollback') return;
    if (!client) throw new Error(`${statement} outside a transaction`);
    try {
      await client.query(statement);
      this.unpin(conn);
    } catch (err) {
      this.unpin(conn, err);
      throw err;
    }
  }

  /** gives the pinned connection back; with an error, the pool closes it instead of reusing it */
  private unpin(conn: PipelinedConnection, err?: unknown): void {
    const client = conn.pinned;
    conn.pinned = undefined;
    client?.release(err === undefined ? undefined : err instanceof Error ? err : true);
  }
}

/** a savepoint statement, built as Kysely's PostgresDriver builds it (the name escaped) */
function savepointNode(command: string, name: string): RawNode {
  return RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
}

export class PipelinedDialect implements Dialect {
  constructor(private readonly options: PipelinedDialectOptions) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver() {
    return new PipelinedDriver(this.options);
  }
  createIntrospector(db: Parameters<Dialect['createIntrospector']>[0]) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
