/**
 * Two instances on one PostgreSQL: a key revoked on one, or gone with its organization, is
 * refused by the other, which had it in memory; also while the listeners' connections are cut.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ApiKeyVerifier } from '../../src/api-keys/verifier.js';
import { DatabaseListener, LISTENER_APPLICATION_NAME } from '../../src/db/listener.js';
import { HttpError } from '../../src/http/errors.js';
import { freePort } from '../support/net.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';

const pgUrl = process.env.TEST_DATABASE_URL;

describe('API keys on two instances of one PostgreSQL', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let url: string;
  let dropDatabase: () => Promise<void>;
  let owner: TestAccount;
  const latencies: number[] = [];

  before(async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    ({ url, drop: dropDatabase } = await postgres.create());
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    a = await startSystem(shared);
    b = await startSystem(shared);
    owner = await account(a);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await dropDatabase?.();
    if (latencies.length) console.log(`# a revoked key was refused by the other instance after ${latencies.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
  });

  const newKey = async (orgId: string) => {
    const res = await as(a, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'shared', role: 'admin' });
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; key: string };
  };
  const asKey = (s: TestSystem, key: string, orgId: string) => s.client('GET', `/api/orgs/${orgId}/members`, { headers: { authorization: `Bearer ${key}` } });

  /** Asks B every 20 ms (at most 3 s) until the key is refused; returns how long that took. */
  const untilRefusedOnB = async (key: string, orgId: string): Promise<number> => {
    const started = performance.now();
    for (;;) {
      const res = await asKey(b, key, orgId);
      if (res.status === 401) return performance.now() - started;
      assert.ok(performance.now() - started < 3000, `B still answers ${res.status} after 3 s`);
      await sleep(20);
    }
  };

  const listeners = async (terminate: boolean): Promise<number> => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `select ${terminate ? 'pg_terminate_backend(pid)' : 'pid'} from pg_stat_activity where datname = current_database() and application_name = $1`,
        [LISTENER_APPLICATION_NAME],
      );
      return rows.length;
    } finally {
      await admin.end();
    }
  };

  it('a key revoked on one instance is refused on the other', async () => {
    const orgId = await createOrg(a, owner, 'Shared');
    assert.equal(await listeners(false), 2, 'one listener per instance, for sessions and keys alike');
    for (let round = 0; round < 3; round++) {
      const { id, key } = await newKey(orgId);
      assert.equal((await asKey(b, key, orgId)).status, 200, 'B knows the key');
      assert.equal((await as(a, owner, 'DELETE', `/api/orgs/${orgId}/api-keys/${id}`)).status, 204);
      assert.equal((await asKey(a, key, orgId)).status, 401, 'at once where it was revoked');
      latencies.push(await untilRefusedOnB(key, orgId));
    }
  });

  it('a key gone with its organization is refused on the other instance', async () => {
    const orgId = await createOrg(a, owner, 'Short-lived');
    const { key } = await newKey(orgId);
    assert.equal((await asKey(b, key, orgId)).status, 200);
    assert.equal((await as(a, owner, 'DELETE', `/api/orgs/${orgId}`)).status, 204);
    await untilRefusedOnB(key, orgId);
  });

  it("still refuses it while the listeners' connections are cut, by re-checking the keys it holds", async () => {
    const orgId = await createOrg(a, owner, 'Cut');
    const { id, key } = await newKey(orgId);
    assert.equal((await asKey(b, key, orgId)).status, 200);
    assert.equal(await listeners(true), 2);
    assert.equal((await as(a, owner, 'DELETE', `/api/orgs/${orgId}/api-keys/${id}`)).status, 204);
    latencies.push(await untilRefusedOnB(key, orgId));
    let back = 0;
    for (let i = 0; i < 60 && back < 2; i++) {
      await sleep(100);
      back = await listeners(false);
    }
    assert.equal(back, 2, 'both listeners reconnected');
  });

  it('re-checks the keys it holds every poll interval while no listener can connect', async () => {
    const log = a.system.logs.logger('test');
    // nothing listens on this port: only the re-check can learn of the revocation
    const listener = new DatabaseListener({
      source: { kind: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` },
      log,
      pollIntervalMs: 200,
    });
    const verifier = new ApiKeyVerifier({ db: a.system.database.db, log, limit: null, store: 'memory', listener });
    await listener.start();
    try {
      assert.equal(listener.isListening, false);
      const orgId = await createOrg(a, owner, 'Polled');
      const { id, key } = await newKey(orgId);
      assert.equal(((await verifier.verify(key, '127.0.0.1')) as { id: string }).id, id);
      assert.equal(verifier.size, 1);
      assert.equal((await as(a, owner, 'DELETE', `/api/orgs/${orgId}/api-keys/${id}`)).status, 204);
      let refused = false;
      for (let i = 0; i < 60 && !refused; i++) {
        await sleep(50);
        refused = (await verifier.verify(key, '127.0.0.1')) instanceof HttpError;
      }
      assert.ok(refused, 'the re-check found the revocation');
      assert.equal(verifier.size, 0);
    } finally {
      await listener.stop();
      await verifier.stop();
    }
  });
});
