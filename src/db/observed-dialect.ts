/**
 * A Kysely dialect wrapper that runs every statement through `around` (a tracing span, for
 * one): it wraps the driver's connections, so it works whatever driver the dialect builds
 * (pg, PGlite, a pipelined one) and needs nothing from them.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';

/** Runs one statement: must call `execute` once and return (or rethrow) its outcome. */
export type QueryAround = <T>(query: CompiledQuery, execute: () => Promise<T>) => Promise<T>;

class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly around: QueryAround,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.around(query, () => this.inner.executeQuery<R>(query));
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection): DatabaseConnection => (connection instanceof ObservedConnection ? connection.inner : connection);

class ObservedDriver implements Driver {
  // the same wrapper for the same connection: Kysely compares connections it hands back
  private readonly wrappers = new WeakMap<DatabaseConnection, ObservedConnection>();
  savepoint?: Driver['savepoint'];
  rollbackToSavepoint?: Driver['rollbackToSavepoint'];
  releaseSavepoint?: Driver['releaseSavepoint'];

  constructor(
    private readonly inner: Driver,
    private readonly around: QueryAround,
  ) {
    // only the optional methods the inner driver has: Kysely checks for their presence
    if (inner.savepoint) this.savepoint = (c, name, compile) => inner.savepoint!(innerOf(c), name, compile);
    if (inner.rollbackToSavepoint) this.rollbackToSavepoint = (c, name, compile) => inner.rollbackToSavepoint!(innerOf(c), name, compile);
    if (inner.releaseSavepoint) this.releaseSavepoint = (c, name, compile) => inner.releaseSavepoint!(innerOf(c), name, compile);
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) this.wrappers.set(connection, (wrapper = new ObservedConnection(connection, this.around)));
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with every statement run through `around`. */
export function observeDialect(dialect: Dialect, around: QueryAround): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new ObservedDriver(dialect.createDriver(), around),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
