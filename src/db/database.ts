/**
 * The database component: Kysely over PGlite (embedded default) or PostgreSQL, with the
 * driver's and pool's own events routed into the log backend as `slf4j` signals.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, sql, type Dialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import type { LogBackend, Logger } from '../logging/logger.js';
import { dumpPglite } from './dump.js';
import type { NotificationSource } from './listener.js';
import { lockDirectory, type DirectoryLock } from './lock.js';
import { initializePgliteDirectory, needsInitdb } from './pglite-init.js';
import { migrateToLatest } from './migrate.js';
import { observeDialect, type QueryAround } from './observed-dialect.js';
import { PGliteDialect } from './pglite-dialect.js';
import { PipelinedDialect } from './pipelined-dialect.js';
import { PreparedStatementClient } from './prepared-client.js';
import type { DatabaseSchema } from './schema.js';

export type DB = Kysely<DatabaseSchema>;

export interface Database {
  db: DB;
  kind: 'pglite' | 'postgres';
  /** resolves true when the database answers `select 1` within `timeoutMs` */
  ping(timeoutMs: number): Promise<boolean>;
  /** where the instance's listener hears NOTIFY (src/db/listener.ts) */
  notifications: NotificationSource;
  /**
   * PGlite in a directory: answers `requestCommand(dir, name)` of a command-line tool (lock.ts)
   * with `handler`, since no other process may open the directory; absent otherwise
   */
  serveCommand?(name: string, handler: () => Promise<string>): void;
  /** PostgreSQL: the pool's connections (open, idle) and waiting callers, for metrics */
  poolStats?: () => { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/**
 * Shared pipelined connections for single statements (besides PG_POOL_MAX for transactions):
 * two keep both cores' worth of batching while one is busy reading (docs/performance.md).
 */
const SHARED_CONNECTIONS = 2;
/** how the shared connections show in pg_stat_activity */
export const PIPELINED_APPLICATION_NAME = 'saas-pipelined';

export interface OpenDatabaseOptions {
  /** run around every statement (tracing's query spans, src/observability/) */
  aroundQuery?: QueryAround;
  /**
   * An in-memory database (`memory://`) starts from this data directory (PGlite's
   * `dumpDataDir`) rather than an empty one: PGlite's initdb takes seconds of CPU, which tests
   * starting a hundred systems feel (test/support/migrated.ts). Migrations still run.
   */
  memoryImage?: Blob;
}

// bigint (int8) as string: ids and sequence numbers must not lose precision
pg.types.setTypeParser(20, (v: string) => v);

/**
 * PostgreSQL settings for the embedded database, chosen for a small machine: PGlite's default
 * 128 MB of shared buffers is most of its resident memory after start, and one process with one
 * connection gains nothing from it (the operating system caches the files anyway). Measured in
 * docs/performance.md ("The embedded database's footprint").
 */
export const PGLITE_SETTINGS = ['shared_buffers=16MB'];

export async function openDatabase(config: Config, logs: LogBackend, options: OpenDatabaseOptions = {}): Promise<Database> {
  const log = logs.logger('saas.db');
  const observed = (dialect: Dialect): Dialect => (options.aroundQuery ? observeDialect(dialect, options.aroundQuery) : dialect);
  let db: DB;
  let kind: Database['kind'];
  let lock: DirectoryLock | undefined;
  let pglite: PGlite | undefined;
  let poolStats: Database['poolStats'];
  let notifications: NotificationSource;
  if (config.databaseUrl?.startsWith('postgres')) {
    const driverLog = logs.logger('pg', 'slf4j');
    const poolLog = logs.logger('pg-pool', 'slf4j');
    const pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: config.pgPoolMax,
      connectionTimeoutMillis: config.databaseTimeoutMs,
      // a database that stops answering fails requests with 503 instead of holding them forever
      query_timeout: config.databaseTimeoutMs,
      idleTimeoutMillis: 30_000,
      ...(config.pgPreparedStatements ? { Client: PreparedStatementClient } : {}),
    });
    pool.on('connect', (client) => {
      poolLog.debug('pg-pool/connect', 'Opened a database connection', { total: pool.totalCount });
      client.on('notice', (n) => driverLog.info('pg/notice', n.message ?? 'notice', { severity: n.severity }));
      // a connection lost while checked out emits 'error' on the client; unheard, it would crash
      // the process on a database restart. The query in progress gets the error as well.
      client.on('error', (err) =>
        driverLog.error('pg/connection-error', `Database connection lost: ${err.message}`, { sqlstate: (err as { code?: string }).code }),
      );
    });
    pool.on('remove', () => poolLog.debug('pg-pool/remove', 'Closed a database connection', { total: pool.totalCount }));
    // an idle client losing its server must not crash the process
    pool.on('error', (err) => poolLog.error('pg-pool/error', `Idle connection error: ${err.message}`, { sqlstate: (err as { code?: string }).code }));
    // single statements share a few pipelined connections; transactions take one from the pool
    db = new Kysely<DatabaseSchema>({
      dialect: observed(
        new PipelinedDialect({
          client: { connectionString: config.databaseUrl, connectionTimeoutMillis: config.databaseTimeoutMs, application_name: PIPELINED_APPLICATION_NAME },
          sharedConnections: SHARED_CONNECTIONS,
          pool,
          preparedStatements: config.pgPreparedStatements,
          stallTimeoutMs: config.databaseTimeoutMs,
          onConnect(client, slot) {
            driverLog.debug('pg/connect', 'Opened a shared database connection', { slot });
            client.on('notice', (n) => driverLog.info('pg/notice', n.message ?? 'notice', { severity: n.severity }));
          },
          onConnectionError: (err, slot) =>
            driverLog.error('pg/connection-error', `Shared database connection lost: ${err.message}`, { sqlstate: (err as { code?: string }).code, slot }),
        }),
      ),
    });
    kind = 'postgres';
    notifications = { kind: 'postgres', url: config.databaseListenUrl ?? config.databaseUrl };
    poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  } else {
    if (config.databaseUrl === 'memory://') {
      const { PGlite } = await import('@electric-sql/pglite');
      pglite = new PGlite({ postgresqlconf: PGLITE_SETTINGS, ...(options.memoryImage ? { loadDataDir: options.memoryImage } : {}) });
    } else {
      ({ pglite, lock } = await openPgliteDirectory(config.pgliteDir));
    }
    db = new Kysely<DatabaseSchema>({ dialect: observed(new PGliteDialect(pglite)) });
    kind = 'pglite';
    const session = pglite;
    const kysely = db;
    // One session: LISTEN there hears this process's own commits, which are all there are. Run
    // while holding the driver's connection, so it never lands inside another holder's
    // transaction (whose rollback would undo it).
    notifications = { kind: 'pglite', listen: (channel, onPayload) => kysely.connection().execute(() => session.listen(channel, onPayload)) };
  }

  try {
    if (kind === 'postgres') await waitForDatabase(db, config, log);
    await migrateToLatest(db as unknown as Kysely<unknown>, log);
  } catch (err) {
    await db.destroy().catch(() => undefined);
    await lock?.release();
    throw err;
  }
  if (lock && pglite) {
    const client = pglite;
    // the dump holds PGlite's one connection: requests wait for it, and see no half-dumped state
    lock.serveDumps(() => db.connection().execute(() => dumpPglite(client)));
  }
  log.info('db/ready', `Database ready (${kind})`, { kind });

  const held = lock;
  return {
    db,
    kind,
    notifications,
    poolStats,
    ...(held ? { serveCommand: (name: string, handler: () => Promise<string>) => held.serveCommand(name, handler) } : {}),
    async ping(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        return await Promise.race([
          sql`select 1`.execute(db).then(
            () => true,
            () => false,
          ),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      try {
        await db.destroy();
      } finally {
        await lock?.release();
      }
    },
  };
}

/** PostgreSQL did not answer at start-up within DATABASE_CONNECT_TIMEOUT. */
export class DatabaseUnreachableError extends Error {}

/** `host:port` of a PostgreSQL URL: what a message may name (never the password). */
export function databaseAddress(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname || 'localhost'}:${port || '5432'}`;
  } catch {
    return 'the configured database';
  }
}

const WAIT_FIRST_MS = 250;
const WAIT_MAX_MS = 2_000;

/**
 * Start-up with PostgreSQL not there yet (a container starting beside it, a restart): says once
 * that it waits, asks again with backoff until DATABASE_CONNECT_TIMEOUT, then gives up with one
 * line naming the database and what failed. An error that is not about reaching it (a wrong
 * password, a missing database) ends the wait at once.
 */
async function waitForDatabase(db: DB, config: Config, log: Logger): Promise<void> {
  const address = databaseAddress(config.databaseUrl!);
  const deadline = Date.now() + config.databaseConnectTimeoutMs;
  let wait = WAIT_FIRST_MS;
  for (let said = false; ; said = true) {
    try {
      await sql`select 1`.execute(db);
      if (said) log.info('db/reached', `The database at ${address} answers`);
      return;
    } catch (err) {
      const reason = (err as Error).message;
      if (!isDatabaseUnavailable(err)) throw new DatabaseUnreachableError(`the database at ${address} refused the connection: ${reason}`);
      if (Date.now() + wait > deadline) {
        throw new DatabaseUnreachableError(
          `the database at ${address} did not answer within ${config.databaseConnectTimeoutMs / 1000} s (DATABASE_CONNECT_TIMEOUT): ${reason}`,
        );
      }
      if (!said)
        log.warn('db/waiting', `Waiting for the database at ${address} (${reason}); giving up after ${config.databaseConnectTimeoutMs / 1000} s`, { address });
    }
    await delay(wait);
    wait = Math.min(wait * 2, WAIT_MAX_MS);
  }
}

/**
 * Opens a PGlite directory (created if missing) after taking its lock: throws
 * DirectoryLockedError naming the process that has it open. Closing the PGlite instance does not
 * release the lock; the caller releases it after.
 */
export async function openPgliteDirectory(dir: string): Promise<{ pglite: PGlite; lock: DirectoryLock }> {
  // the database files are the owner's alone (PGlite writes them world-readable, 0666): as
  // PostgreSQL insists on for its data directory
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const lock = await lockDirectory(dir);
  try {
    if (needsInitdb(dir)) await initializePgliteDirectory(dir, PGLITE_SETTINGS);
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = new PGlite({ dataDir: dir, postgresqlconf: PGLITE_SETTINGS });
    await pglite.waitReady;
    return { pglite, lock };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/** True for errors that mean "the database is not there right now" (answered 503). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code;
  if (code && UNAVAILABLE_CODES.has(code)) return true;
  return /timeout exceeded when trying to connect|timeout expired|No answer for \d+ ms|Connection terminated|not queryable|connect ECONNREFUSED|Query read timeout|PGlite is closed/i.test(
    err.message,
  );
}
