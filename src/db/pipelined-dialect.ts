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
import type pg from 'pg';
import { SharedConnection, toKysely, type SharedConnectionOptions } from './shared-connection.js';

export interface PipelinedDialectOptions extends SharedConnectionOptions {
  /** how many shared connections single statements are spread over */
  sharedConnections: number;
  /** connections for transactions */
  pool: pg.Pool;
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
