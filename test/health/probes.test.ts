/** The liveness and readiness probes. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

describe('probes', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0]);
  });
  after(async () => t?.stop());

  it('live answers 200 and ready 200 with the database and every migration', async () => {
    const live = await t.client('GET', '/api/health/live');
    assert.equal(live.status, 200);
    assert.deepEqual(live.body, { status: 'ok' });
    const ready = await t.client('GET', '/api/health/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ok', db: 'ok', migrations: 'applied', storage: 'ok' });
  });

  it('ready is 503 degraded while a migration is missing', async () => {
    const db = t.system.database.db;
    const [last] = (await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration order by name desc limit 1`.execute(db)).rows;
    await sql`delete from kysely_migration where name = ${last.name}`.execute(db);
    try {
      await sleep(600); // past the 500 ms cache
      const ready = await t.client('GET', '/api/health/ready');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { status: 'degraded', db: 'ok', migrations: 'pending', storage: 'ok' });
      assert.equal((await t.client('GET', '/api/health/live')).status, 200, 'liveness does not care');
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${last.name}, ${last.timestamp})`.execute(db);
    }
    await sleep(600);
    assert.equal((await t.client('GET', '/api/health/ready')).status, 200);
  });

  it('ready is 503 draining from the moment stop() begins; requests on an open connection are still answered', async () => {
    assert.equal((await t.client('GET', '/api/health/live')).status, 200, 'opens a kept connection');
    const stopping = t.system.stop();
    assert.equal(t.system.draining, true);
    const ready = await t.client('GET', '/api/health/ready');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'draining');
    assert.equal(ready.headers.connection, 'close');
    await stopping;
  });
});
