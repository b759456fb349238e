/**
 * Test support: build a whole system on PGlite or PostgreSQL with one call, listening on
 * 127.0.0.1 on a free port, with the JSON log file on so tests can read the parsed entries.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { LogEntry } from '../../src/logging/logger.js';
import { buildSystem, type System, type SystemOptions } from '../../src/system.js';
import { makeClient, type TestClient } from './http.js';
import { memoryDatabaseImage, postgresTemplate } from './migrated.js';

export interface TestDatabase {
  name: 'pglite' | 'postgres';
  /**
   * a fresh database URL for one system; the returned function drops it. A PostgreSQL database
   * is migrated already (migrated.ts) unless `empty` is asked for (a restore's target, a
   * migration's own test)
   */
  create(options?: { empty?: boolean }): Promise<{ url: string; drop(): Promise<void> }>;
}

/** PGlite always; PostgreSQL when TEST_DATABASE_URL is set (mandatory under CI=true). */
export function testDatabases(): TestDatabase[] {
  const list: TestDatabase[] = [{ name: 'pglite', create: async () => ({ url: 'memory://', drop: async () => undefined }) }];
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (!pgUrl && process.env.CI === 'true') throw new Error('CI=true requires TEST_DATABASE_URL: the PostgreSQL tests must not be skipped');
  if (pgUrl) {
    list.push({
      name: 'postgres',
      async create({ empty = false } = {}) {
        const admin = new pg.Client({ connectionString: pgUrl });
        await admin.connect();
        const dbName = `t_${randomBytes(6).toString('hex')}`;
        // migrated already (migrated.ts)
        await admin.query(empty ? `create database ${dbName}` : `create database ${dbName} template ${await postgresTemplate(pgUrl)}`);
        await admin.end();
        const url = new URL(pgUrl);
        url.pathname = `/${dbName}`;
        return {
          url: url.toString(),
          async drop() {
            const c = new pg.Client({ connectionString: pgUrl });
            await c.connect();
            await c.query(`drop database if exists ${dbName} with (force)`);
            await c.end();
          },
        };
      },
    });
  }
  return list;
}

export interface TestSystem {
  system: System;
  url: string;
  logFile: string;
  client: TestClient;
  /** every entry written to the JSON log file so far (flushes first) */
  logEntries(): Promise<LogEntry[]>;
  /** the raw text of the log file (flushes first) */
  logText(): Promise<string>;
  stop(): Promise<void>;
}

export const TEST_JWT_SECRET = 'test-secret-0123456789abcdefghijklmnopqrstuvwxyz';

export async function startSystem(db: TestDatabase, env: Record<string, string> = {}, options: SystemOptions = {}): Promise<TestSystem> {
  const { url: databaseUrl, drop } = await db.create();
  const dir = await mkdtemp(join(tmpdir(), 'saas-test-'));
  const logFile = join(dir, 'saas-app.json');
  const config = loadConfig({
    APP_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_FILE: logFile,
    PUBLIC_DIR: join(dir, 'public'),
    // the disk store of files, removed with the rest (docs/files.md)
    STORAGE_DIR: join(dir, 'files'),
    // every test signs up from 127.0.0.1; the sign-up limit has its own tests
    SIGNUP_LIMIT_ADDRESS: '0',
    ...env,
  });
  // an in-memory database starts migrated, from the image (migrated.ts)
  const image = databaseUrl === 'memory://' && options.memoryDatabaseImage === undefined ? await memoryDatabaseImage() : undefined;
  const system = await buildSystem(config, image ? { ...options, memoryDatabaseImage: image } : options);
  const url = await system.listen();
  const read = async () => {
    await system.logs.flush();
    return readFile(logFile, 'utf8').catch(() => '');
  };
  return {
    system,
    url,
    logFile,
    client: makeClient(url),
    logText: read,
    async logEntries() {
      return (await read())
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogEntry);
    },
    async stop() {
      await system.stop();
      await drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
