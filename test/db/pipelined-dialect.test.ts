/**
 * The pipelined PostgreSQL driver: single statements share a few pipelined connections,
 * transactions get a pooled connection of their own, a statement's error reaches only its
 * caller, and a lost or stalled shared connection fails its statements with an error the HTTP
 * pipeline answers 503 (never a hang), then is replaced.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { isDatabaseUnavailable, PIPELINED_APPLICATION_NAME } from '../../src/db/database.js';
import { PipelinedDialect, type PipelinedDialectOptions } from '../../src/db/pipelined-dialect.js';
import { PreparedStatementClient } from '../../src/db/prepared-client.js';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

interface Schema {
  item: { id: number; label: string };
}

/** fails the test instead of hanging it when `promise` does not settle */
async function settles<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle: a hang`)), ms);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const pid = async (db: Kysely<Schema>) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0].pid;

describe('Pipelined PostgreSQL driver', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let database: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  const opened: Array<Kysely<Schema>> = [];

  const open = (options: Partial<PipelinedDialectOptions> = {}) => {
    const db = new Kysely<Schema>({
      dialect: new PipelinedDialect({
        client: { connectionString: database.url, application_name: PIPELINED_APPLICATION_NAME },
        sharedConnections: 2,
        pool: new pg.Pool({ connectionString: database.url, max: 10, Client: PreparedStatementClient }),
        preparedStatements: true,
        stallTimeoutMs: 10_000,
        onConnectionError: () => undefined,
        ...options,
      }),
    });
    opened.push(db);
    return db;
  };

  before(async () => {
    database = await postgres!.create();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('create table item (id int primary key, label text not null)');
    await admin.query(`insert into item select i, 'item ' || i from generate_series(1, 200) i`);
  });

  after(async () => {
    for (const db of opened) await db.destroy().catch(() => undefined);
    await admin?.end();
    await database?.drop();
  });

  it('answers each of many concurrent statements with its own rows, over the shared connections only', async () => {
    const db = open();
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => {
        const id = (i % 200) + 1;
        return db
          .selectFrom('item')
          .select(['id', 'label', sql<number>`pg_backend_pid()`.as('pid')])
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
          .then((row) => ({ id, row }));
      }),
    );
    for (const { id, row } of results) assert.deepEqual([row.id, row.label], [id, `item ${id}`]);
    const pids = new Set(results.map((r) => r.row.pid));
    assert.ok(pids.size >= 1 && pids.size <= 2, `1000 statements over ${pids.size} connections, not more than the 2 shared`);
    const shared = await admin.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1`, [
      PIPELINED_APPLICATION_NAME,
    ]);
    assert.equal(shared.rows[0].n, pids.size);
  });

  it('gives a transaction a connection of its own: other requests never run in it nor see its uncommitted write', async () => {
    const db = open();
    const sharedPids = new Set(await Promise.all(Array.from({ length: 20 }, () => pid(db))));
    const seenDuring: Array<{ pid: number; visible: boolean }> = [];
    const transactionPids = await Promise.all(
      Array.from({ length: 4 }, (_, t) =>
        db.transaction().execute(async (trx) => {
          const own = await pid(trx as unknown as Kysely<Schema>);
          await trx
            .insertInto('item')
            .values({ id: 1000 + t, label: 'uncommitted' })
            .execute();
          // concurrent statements outside the transaction, while it is open
          const outside = await Promise.all(
            Array.from({ length: 25 }, async () => {
              const row = await db
                .selectFrom('item')
                .select(['id', sql<number>`pg_backend_pid()`.as('pid')])
                .where('id', '=', 1000 + t)
                .executeTakeFirst();
              return { pid: row?.pid ?? (await pid(db)), visible: row !== undefined };
            }),
          );
          seenDuring.push(...outside);
          assert.equal(await pid(trx as unknown as Kysely<Schema>), own, 'every statement of the transaction on one connection');
          return own;
        }),
      ),
    );
    assert.equal(new Set(transactionPids).size, 4, 'concurrent transactions on different connections');
    for (const p of transactionPids) assert.ok(!sharedPids.has(p), 'a transaction never on a shared connection');
    for (const s of seenDuring) {
      assert.equal(s.visible, false, 'an uncommitted write is invisible outside its transaction');
      assert.ok(!transactionPids.includes(s.pid), 'no outside statement ran on a transaction connection');
    }
    const committed = await db.selectFrom('item').select('id').where('id', '>=', 1000).execute();
    assert.deepEqual(committed.map((r) => r.id).sort(), [1000, 1001, 1002, 1003], 'committed writes visible at once');
    await db.deleteFrom('item').where('id', '>=', 1000).execute();
  });

  it('rolls back a failed transaction and returns its connection clean', async () => {
    const db = open({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) });
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('item').values({ id: 2000, label: 'rolled back' }).execute();
        throw new Error('abort');
      }),
      /abort/,
    );
    assert.equal(await db.selectFrom('item').select('id').where('id', '=', 2000).executeTakeFirst(), undefined);
    // the one pooled connection is usable again, outside any transaction
    const status = await db
      .transaction()
      .execute(async (trx) => (await sql<{ n: number }>`select count(*)::int as n from item where id = 2000`.execute(trx)).rows[0].n);
    assert.equal(status, 0);
  });

  it("delivers a statement's error to its caller only; the statements pipelined with it succeed", async () => {
    const db = open({ sharedConnections: 1 });
    const reads = (from: number) =>
      Array.from({ length: 30 }, (_, i) =>
        db
          .selectFrom('item')
          .select('label')
          .where('id', '=', from + i)
          .executeTakeFirstOrThrow(),
      );
    const [before, duplicate, afterwards] = [reads(1), db.insertInto('item').values({ id: 5, label: 'again' }).execute(), reads(31)];
    await assert.rejects(duplicate, (err: { code?: string }) => err.code === '23505');
    assert.deepEqual(
      (await Promise.all(before)).map((r) => r.label),
      Array.from({ length: 30 }, (_, i) => `item ${1 + i}`),
    );
    assert.deepEqual(
      (await Promise.all(afterwards)).map((r) => r.label),
      Array.from({ length: 30 }, (_, i) => `item ${31 + i}`),
    );
  });

  it('keeps prepared statements working when a table changes underneath', async () => {
    const db = open({ sharedConnections: 1 });
    await admin.query('create table widget (id int primary key, label text)');
    await admin.query(`insert into widget values (1, 'w')`);
    const select = (id: number) => sql<Record<string, unknown>>`select * from widget where id = ${id}`.execute(db);
    assert.deepEqual((await select(1)).rows, [{ id: 1, label: 'w' }]);
    const named = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_prepared_statements where statement = ${'select * from widget where id = $1'}`.execute(db);
    assert.equal(named.rows[0].n, 1, 'prepared once on the shared connection');
    await admin.query('alter table widget add column extra text');
    assert.deepEqual((await select(1)).rows, [{ id: 1, label: 'w', extra: null }]);
  });

  it("reads a named statement's rows with the shape it had, and with the new one once its columns change", async () => {
    const db = open({ sharedConnections: 1 });
    await admin.query('create table gadget (id int primary key, size int, made timestamptz, note text)');
    await admin.query(`insert into gadget values (1, 10, '2026-01-02T03:04:05Z', null), (2, null, null, 'two')`);
    const select = (id: number) => sql<Record<string, unknown>>`select * from gadget where id = ${id}`.execute(db);
    // the first execution builds the shape, the next ones reuse it: same columns, same parsing
    for (let round = 0; round < 3; round++) {
      assert.deepEqual((await select(1)).rows, [{ id: 1, size: 10, made: new Date('2026-01-02T03:04:05Z'), note: null }]);
      assert.deepEqual((await select(2)).rows, [{ id: 2, size: null, made: null, note: 'two' }]);
    }
    const rows = await Promise.all([1, 2, 1, 2].map(select));
    assert.deepEqual(
      rows.map((r) => r.rows[0].id),
      [1, 2, 1, 2],
    );
    // a column's type changed under the prepared statement: re-prepared, its rows parsed as the new type
    await admin.query('alter table gadget alter column size type text');
    assert.deepEqual((await select(1)).rows, [{ id: 1, size: '10', made: new Date('2026-01-02T03:04:05Z'), note: null }]);
    await admin.query('alter table gadget drop column note');
    assert.deepEqual((await select(2)).rows, [{ id: 2, size: null, made: null }]);
  });

  it('fails the statements of a terminated shared connection as unavailable, then replaces it', async () => {
    const db = open();
    const sharedPids = [...new Set(await Promise.all([pid(db), pid(db), pid(db), pid(db)]))];
    assert.equal(sharedPids.length, 2, 'both shared connections open');
    // statements held on the wire behind a sleeping one on each connection
    const sleeping = [sql`select pg_sleep(5)`.execute(db), sql`select pg_sleep(5)`.execute(db)];
    const queued = Array.from({ length: 20 }, (_, i) =>
      db
        .selectFrom('item')
        .select('id')
        .where('id', '=', i + 1)
        .executeTakeFirst(),
    );
    // observed from now on: they fail while the termination below is still being answered
    const settled = Promise.allSettled([...sleeping, ...queued]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const killed = await admin.query(`select pg_terminate_backend(pid) as done from unnest($1::int[]) pid`, [sharedPids]);
    assert.deepEqual(
      killed.rows.map((r) => r.done),
      [true, true],
    );
    const outcomes = await settles(settled, 'statements on a terminated connection');
    for (const o of outcomes) {
      assert.equal(o.status, 'rejected');
      assert.ok(isDatabaseUnavailable((o as PromiseRejectedResult).reason), `answered as unavailable: ${(o as PromiseRejectedResult).reason}`);
    }
    // a statement sent before its connection's termination notice was read fails too, as
    // unavailable (right, and timing-dependent on a busy machine): wait until both connections
    // have been replaced, i.e. statements on both succeed, a bounded number of times
    for (let round = 0; ; round++) {
      const probe = await Promise.allSettled([pid(db), pid(db), pid(db), pid(db)]);
      if (probe.every((o) => o.status === 'fulfilled')) break;
      for (const o of probe) if (o.status === 'rejected') assert.ok(isDatabaseUnavailable(o.reason), `answered as unavailable: ${o.reason}`);
      assert.ok(round < 20, 'the shared connections were replaced');
    }
    const again = await settles(
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          db
            .selectFrom('item')
            .select('label')
            .where('id', '=', i + 1)
            .executeTakeFirstOrThrow(),
        ),
      ),
      'statements after the loss',
    );
    assert.equal(again[49].label, 'item 50');
  });

  it('closes a shared connection that stops answering, failing its statements as unavailable', async () => {
    const stall = await startStallingProxy(new URL(database.url));
    try {
      const url = new URL(database.url);
      url.host = `127.0.0.1:${stall.port}`;
      const db = open({ client: { connectionString: url.toString() }, sharedConnections: 1, stallTimeoutMs: 300 });
      assert.equal((await db.selectFrom('item').select('label').where('id', '=', 3).executeTakeFirstOrThrow()).label, 'item 3');
      stall.pause();
      const stuck = await settles(Promise.allSettled(Array.from({ length: 5 }, () => pid(db))), 'statements on a stalled connection');
      for (const o of stuck) assert.ok(o.status === 'rejected' && isDatabaseUnavailable(o.reason), `answered as unavailable: ${JSON.stringify(o)}`);
      stall.resume();
      assert.equal((await db.selectFrom('item').select('label').where('id', '=', 4).executeTakeFirstOrThrow()).label, 'item 4');
    } finally {
      await stall.close();
    }
  });
});

describe('GET /api/account/me while a shared connection is terminated', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let t: TestSystem;
  let admin: pg.Client;
  let token: string;

  before(async () => {
    t = await startSystem(postgres!);
    const { email } = await signUp(t.client);
    token = (await logIn(t.client, email)).body['access-token'];
    admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });

  after(async () => {
    await admin?.end();
    await t?.stop();
  });

  it('answers 503 service-unavailable for the requests on it, then 200 again, without a hang or a crash', async () => {
    const me = () => t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await me()).status, 200);
    const dbName = (await sql<{ db: string }>`select current_database() as db`.execute(t.system.database.db)).rows[0].db;
    // both shared connections busy, so the requests below wait on the wire when the backends go
    const sleeping = [0, 1].map(() => sql`select pg_sleep(5)`.execute(t.system.database.db).catch((err: unknown) => err));
    const during = Array.from({ length: 40 }, () => me());
    await new Promise((resolve) => setTimeout(resolve, 300));
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2`, [
      dbName,
      PIPELINED_APPLICATION_NAME,
    ]);
    const responses = await settles(Promise.all(during), 'requests on a terminated connection');
    await Promise.all(sleeping);
    const unavailable = responses.filter((r) => r.status === 503);
    assert.ok(unavailable.length > 0, 'the requests on the terminated connections are answered 503');
    for (const r of responses) assert.ok(r.status === 200 || r.status === 503, `status ${r.status}: ${r.text}`);
    for (const r of unavailable) assert.equal(r.body.type, 'service-unavailable');
    // under load again: every request answered, the server still up
    const later = await settles(Promise.all(Array.from({ length: 100 }, () => me())), 'requests after the loss');
    assert.deepEqual([...new Set(later.map((r) => r.status))], [200]);
  });
});

/** A TCP proxy to PostgreSQL that can stop passing the server's answers on (a stalled network). */
async function startStallingProxy(target: URL): Promise<{ port: number; pause(): void; resume(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let paused = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!paused) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
