import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { logIn, signUp } from '../support/auth.js';
import { makeClient, type TestClient } from '../support/http.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { databaseEnv, runProcess, startServer } from './processes.js';

const stripe = new Stripe('sk_test_not_used');
const WEBHOOK_SECRET = 'whsec_dump_restore_0123456789';
const postgres = testDatabases().find((d) => d.name === 'postgres');

/** What a dump must carry: accounts, a refresh token that still rotates, a processed payment event. */
interface Fixture {
  emails: string[];
  refreshToken: string;
  webhookPayload: string;
}

function deliver(client: TestClient, payload: string) {
  const headers = { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) };
  return client('POST', '/api/webhooks/stripe', { headers, body: payload });
}

async function populate(client: TestClient): Promise<Fixture> {
  const emails = [];
  for (let i = 0; i < 3; i++) emails.push((await signUp(client)).email);
  const login = await logIn(client, emails[0]!);
  assert.equal(login.status, 200);
  const webhookPayload = JSON.stringify({
    id: `evt_dump_${Date.now()}`,
    object: 'event',
    type: 'charge.succeeded',
    created: Math.floor(Date.now() / 1000),
    data: { object: { customer: 'cus_dump' } },
  });
  assert.deepEqual((await deliver(client, webhookPayload)).body, { received: true, duplicate: false });
  return { emails, refreshToken: login.body['refresh-token'], webhookPayload };
}

/** The restored system serves the same data, and did not migrate again. */
async function assertSameData(t: TestSystem, fixture: Fixture): Promise<void> {
  for (const email of fixture.emails) assert.equal((await logIn(t.client, email)).status, 200, email);
  const rotated = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': fixture.refreshToken } });
  assert.equal(rotated.status, 200, rotated.text);
  assert.notEqual(rotated.body['refresh-token'], fixture.refreshToken);
  assert.deepEqual((await deliver(t.client, fixture.webhookPayload)).body, { received: true, duplicate: true });
  assert.equal((await t.logEntries()).filter((e) => e.id === 'db/migrated').length, 0);
  // a new row after the restore: the sequences came along
  await signUp(t.client);
  assert.equal((await deliver(t.client, fixture.webhookPayload.replace('evt_dump_', 'evt_after_'))).body.duplicate, false);
}

const systemEnv = { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, LOGIN_LIMIT_EMAIL: '0', LOGIN_LIMIT_ADDRESS: '0' };
/** a system on a PGlite directory (PGLITE_DIR given with the env): no DATABASE_URL */
const PGLITE_DIRECTORY: TestDatabase = { name: 'pglite', create: async () => ({ url: '', drop: async () => undefined }) };

describe('dump and restore', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let work: string;
  before(async () => {
    work = await realpath(await mkdtemp(join(tmpdir(), 'saas-dump-')));
  });
  after(async () => rm(work, { recursive: true, force: true }));

  it('PGlite (dumped through the running server) -> PostgreSQL, and refuses a non-empty target', async () => {
    const pgliteDir = join(work, 'source');
    const server = await startServer({ ...databaseEnv({ pgliteDir }), ...systemEnv });
    const dumpFile = join(work, 'from-pglite.sql');
    let fixture: Fixture;
    try {
      fixture = await populate(makeClient(server.url));
      // the server holds the directory: the dump can only come through it
      const dump = await runProcess('src/db/dump-cli.ts', [dumpFile], databaseEnv({ pgliteDir }));
      assert.equal(dump.code, 0, dump.stderr);
      assert.equal((await logIn(makeClient(server.url), fixture.emails[1]!)).status, 200, 'the server still serves');
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const text = await readFile(dumpFile, 'utf8');
    assert.match(text, /^--\n-- PostgreSQL database dump/);
    for (const email of fixture.emails) assert.ok(text.includes(email));

    const target = await postgres!.create({ empty: true });
    try {
      const restore = await runProcess('src/db/restore-cli.ts', [dumpFile], databaseEnv({ url: target.url }));
      assert.equal(restore.code, 0, restore.stderr);
      const again = await runProcess('src/db/restore-cli.ts', [dumpFile], databaseEnv({ url: target.url }));
      assert.equal(again.code, 1);
      assert.match(
        again.stderr,
        /db:restore failed: The PostgreSQL database .* is not empty \(it has public\..*\)\. Restore into an empty database, or pass --force/,
      );
      assert.ok(!again.stderr.includes('postgres@'), 'no credentials in the message');

      const t = await startSystem({ name: 'postgres', create: async () => ({ url: target.url, drop: async () => undefined }) }, systemEnv);
      try {
        await assertSameData(t, fixture);
      } finally {
        await t.stop();
      }
    } finally {
      await target.drop();
    }
  });

  it('PostgreSQL -> PGlite, and --force replaces a non-empty directory', async () => {
    const source = await postgres!.create();
    const dumpFile = join(work, 'from-postgres.sql');
    let fixture: Fixture;
    try {
      const t = await startSystem({ name: 'postgres', create: async () => ({ url: source.url, drop: async () => undefined }) }, systemEnv);
      try {
        fixture = await populate(t.client);
        const dump = await runProcess('src/db/dump-cli.ts', [dumpFile], databaseEnv({ url: source.url }));
        assert.equal(dump.code, 0, dump.stderr);
      } finally {
        await t.stop();
      }
    } finally {
      await source.drop();
    }

    const pgliteDir = join(work, 'target');
    const restore = await runProcess('src/db/restore-cli.ts', [dumpFile], databaseEnv({ pgliteDir }));
    assert.equal(restore.code, 0, restore.stderr);
    const refused = await runProcess('src/db/restore-cli.ts', [dumpFile], databaseEnv({ pgliteDir }));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`The PGlite directory ${pgliteDir} is not empty`));
    const forced = await runProcess('src/db/restore-cli.ts', [dumpFile, '--force'], databaseEnv({ pgliteDir }));
    assert.equal(forced.code, 0, forced.stderr);
    // with no server running, the dump command opens the directory itself
    const againFile = join(work, 'from-pglite-dir.sql');
    const dumpAgain = await runProcess('src/db/dump-cli.ts', [againFile], databaseEnv({ pgliteDir }));
    assert.equal(dumpAgain.code, 0, dumpAgain.stderr);
    for (const email of fixture.emails) assert.ok((await readFile(againFile, 'utf8')).includes(email));

    const t = await startSystem(PGLITE_DIRECTORY, { ...systemEnv, PGLITE_DIR: pgliteDir });
    try {
      await assertSameData(t, fixture);
    } finally {
      await t.stop();
    }
  });
});
