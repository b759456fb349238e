/**
 * PostgreSQL: two instances deliver each message once (their workers race for the same due
 * deliveries with FOR UPDATE SKIP LOCKED), and a server process killed right after committing a
 * change loses nothing: the next instance delivers the message, under the same webhook-id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { emitWebhookEvent } from '../../src/webhooks/outbox.js';
import { databaseEnv, startServer } from '../db/processes.js';
import { account, as, createOrg } from '../orgs/support.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { startSystem, testDatabases, type TestDatabase } from '../support/system.js';
import { createEndpoint, receiver, waitFor } from './support.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');
const skip = postgres ? false : 'TEST_DATABASE_URL is not set';
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_SCHEDULE: '0.05' };

describe('two instances on one PostgreSQL', { skip }, () => {
  it('deliver each of N messages exactly once', async () => {
    const { url, drop } = await postgres!.create();
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const hook = await receiver();
    // a little slow, so both workers have deliveries in flight at once
    hook.answers = [
      (_req, res) => {
        setTimeout(() => res.writeHead(200).end('ok'), 5);
      },
    ];
    const [a, b] = await Promise.all([startSystem(shared, ENV), startSystem(shared, ENV)]);
    try {
      const owner = await account(a);
      const orgId = await createOrg(a, owner, 'Scaled');
      const endpoint = await createEndpoint(a, owner, orgId, { url: `${hook.url}/scaled`, events: ['*'] });
      hook.secrets.push(endpoint.secret);
      const emit = (s: typeof a, i: number) =>
        s.system.database.db
          .transaction()
          .execute((trx) => emitWebhookEvent(trx, orgId, 'member.updated', { member: { 'account-id': owner.id, role: 'owner', n: i } }));
      // through both, in separate transactions, while both workers run
      const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => emit(i % 2 ? a : b, i)));
      // and many in one transaction: both workers are woken at its commit and race for them
      ids.push(
        ...(await b.system.database.db.transaction().execute(async (trx) => {
          const batch: Array<string | null> = [];
          for (let i = 0; i < 60; i++) batch.push(await emitWebhookEvent(trx, orgId, 'member.updated', { member: { n: 100 + i } }));
          return batch;
        })),
      );
      const n = ids.length;
      assert.ok(ids.every((id) => typeof id === 'string'));
      await waitFor('every message', () => hook.received.length >= n, 60_000);
      await waitFor('every delivery recorded', async () => {
        const left = await a.system.database.db.selectFrom('webhook_delivery').select('id').where('status', '!=', 'succeeded').execute();
        return left.length === 0;
      });
      // both workers keep polling; nothing more arrives
      await sleep(300);
      assert.equal(hook.received.length, n);
      hook.verified('/scaled');
      assert.deepEqual(hook.received.map((d) => d.headers['webhook-id']).sort(), [...ids].sort());
      const attempts = await a.system.database.db
        .selectFrom('webhook_attempt')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(attempts.n), n);
      const byInstance = [await a.logEntries(), await b.logEntries()].map((entries) => entries.filter((e) => e.id === 'webhooks/delivered').length);
      assert.equal(byInstance[0] + byInstance[1], n);
      console.log(`deliveries per instance: ${byInstance.join(' / ')}`);
    } finally {
      await a.stop();
      await b.stop();
      await hook.close();
      await drop();
    }
  });
});

describe('a process killed right after its commit', { skip }, () => {
  it('loses nothing: the next instance delivers the message under the same webhook-id', async () => {
    const { url, drop } = await postgres!.create();
    const hook = await receiver();
    // the dying process may start its attempt: it is never answered
    hook.answers = ['hang'];
    const server = await startServer({
      ...databaseEnv({ url }),
      ...ENV,
      WEBHOOK_TIMEOUT: '3',
      WEBHOOK_LEASE_MS: '3500',
      SIGNUP_LIMIT_ADDRESS: '0',
    });
    const db = new pg.Client({ connectionString: url });
    try {
      const client = makeClient(server.url);
      const { email, id } = await signUp(client, uniqueEmail('killed'));
      const token = (await logIn(client, email)).body['access-token'] as string;
      const owner = { id, email, token };
      const remote = { client } as Parameters<typeof as>[0];
      const orgId = await createOrg(remote, owner, 'Doomed');
      const endpoint = await createEndpoint(remote, owner, orgId, { url: `${hook.url}/killed`, events: ['organization.updated'] });
      hook.secrets.push(endpoint.secret);
      const renamed = await as(remote, owner, 'PATCH', `/api/orgs/${orgId}`, { name: 'Doomed, renamed' });
      assert.equal(renamed.status, 200);
      // committed: the process dies before it could record an attempt
      server.child.kill('SIGKILL');
      await server.exited;

      await db.connect();
      const left = await db.query(`select d.status, d.attempt_count, m.id as message_id from webhook_delivery d join webhook_message m on m.id = d.message_id
        where m.type = 'organization.updated'`);
      assert.equal(left.rows.length, 1);
      assert.equal(left.rows[0].status, 'pending');
      assert.equal(left.rows[0].attempt_count, 0);
      const messageId = left.rows[0].message_id as string;
      assert.equal(Number((await db.query('select count(*) as n from webhook_attempt')).rows[0].n), 0);

      hook.answers = [{ status: 200, body: 'got it' }];
      const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
      const next = await startSystem(shared, ENV);
      try {
        await waitFor(
          'the delivery by the next instance',
          async () => {
            const row = await db.query('select status from webhook_delivery');
            return row.rows[0].status === 'succeeded';
          },
          30_000,
        );
        const delivered = hook.verified('/killed').filter((d) => d.headers['webhook-id'] === messageId);
        assert.ok(delivered.length >= 1);
        assert.equal(delivered[delivered.length - 1].event.data.organization.name, 'Doomed, renamed');
        const attempts = await db.query('select status_code, error from webhook_attempt');
        assert.deepEqual(attempts.rows, [{ status_code: 200, error: null }]);
      } finally {
        await next.stop();
      }
    } finally {
      server.child.kill('SIGKILL');
      await db.end().catch(() => undefined);
      await hook.close();
      await drop();
    }
  });
});
