/**
 * Notifications on two instances of one PostgreSQL (docs/notifications.md, "Live"): a
 * notification caused on one reaches a stream open on the other within a second (NOTIFY wakes,
 * the table is the truth); the per-account cap holds across both; a stop with streams open ends
 * them at once instead of waiting for them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { account, addMember, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { openStream } from './support.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

describe('Notifications on two instances of one PostgreSQL', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let drop: () => Promise<void>;
  let owner: TestAccount;
  let orgId: string;

  before(async () => {
    let url: string;
    ({ url, drop } = await postgres!.create());
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const port = await freePort();
    const env = { APP_URL: `http://127.0.0.1:${port}`, NOTIFICATION_STREAMS_PER_ACCOUNT: '2' };
    a = await startSystem(shared, { ...env, PORT: String(port) });
    b = await startSystem(shared, env);
    owner = await account(a);
    orgId = await createOrg(a, owner, 'Two instances');
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

  it('a notification caused on one instance reaches a stream on the other within a second', async () => {
    const stream = await openStream(b.url, owner.token);
    assert.equal(stream.status, 200);
    await stream.next('unread-count');
    await addMember(a, orgId, owner, await account(a), 'member');
    const arrived = await stream.next('notification', 1000);
    assert.equal(arrived.data.kind, 'member-joined');
    stream.close();
  });

  it('holds the per-account cap across instances', async () => {
    const one = await openStream(a.url, owner.token);
    const two = await openStream(b.url, owner.token);
    assert.deepEqual([one.status, two.status], [200, 200]);
    assert.equal((await openStream(a.url, owner.token)).status, 429);
    assert.equal((await openStream(b.url, owner.token)).status, 429);
    one.close();
    two.close();
  });

  it('a stop with streams open ends them at once', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const open = await openStream(b.url, owner.token);
    assert.equal(open.status, 200);
    const started = Date.now();
    await b.stop();
    const took = Date.now() - started;
    await open.ended;
    // the drain ends streams when it starts (within a second's tick), never waiting out the shutdown timeout for them
    assert.ok(took < b.system.config.shutdownTimeoutMs, `stop took ${took} ms, the shutdown timeout is ${b.system.config.shutdownTimeoutMs} ms`);
  });
});
