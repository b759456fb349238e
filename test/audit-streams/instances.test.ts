/**
 * PostgreSQL, several instances: two instances stream one organization's entries once, in order
 * (their workers race for the same stream under FOR UPDATE SKIP LOCKED); a server process killed
 * in the middle of a batch loses nothing: once its lease has run out the next instance sends the
 * same batch under the same id, then the rest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { databaseEnv, startServer } from '../db/processes.js';
import { account, as, createOrg } from '../orgs/support.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { startSystem, testDatabases, type TestDatabase } from '../support/system.js';
import { waitFor } from '../webhooks/support.js';
import { createStream, entriesSince, streamReceiver, type StreamedEntry } from './support.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');
const skip = postgres ? false : 'TEST_DATABASE_URL is not set';
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', AUDIT_STREAM_POLL_MS: '20', AUDIT_STREAM_RETRY_SCHEDULE: '0.05' };

const unique = (entries: StreamedEntry[]) => [...new Map(entries.map((e) => [e.id, e])).values()];

describe('audit log streams on several instances', { skip }, () => {
  it('two instances deliver every entry once, in order', async () => {
    const { url, drop } = await postgres!.create();
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const receiver = await streamReceiver();
    const [a, b] = await Promise.all([startSystem(shared, ENV), startSystem(shared, ENV)]);
    try {
      const owner = await account(a);
      const orgId = await createOrg(a, owner, 'Scaled');
      const stream = await createStream(a, owner, orgId, { kind: 'https', url: `${receiver.url}/scaled` });
      receiver.secrets['/scaled'] = stream.secret;
      const first = (await as(a, owner, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.created`)).body.entries[0].id as string;
      await Promise.all(Array.from({ length: 40 }, (_, i) => as(i % 2 ? a : b, owner, 'PATCH', `/api/orgs/${orgId}`, { name: `Scaled ${i}` })));
      const expected = await entriesSince(a, owner, orgId, first);
      await waitFor('every entry', () => receiver.entries('/scaled').length >= expected.length, 30_000);
      await waitFor('nothing owed', async () => (await as(a, owner, 'GET', `/api/orgs/${orgId}/audit-log/streams/${stream.id}`)).body.lag === 0);
      const got = receiver.entries('/scaled');
      assert.deepEqual(
        got.map((e) => e.id),
        expected.map((e) => e.id),
        'each entry once, oldest first',
      );
    } finally {
      await a.stop();
      await b.stop();
      await receiver.close();
      await drop();
    }
  });

  it('a process killed mid-batch loses nothing: the next instance sends the same batch, then the rest', async () => {
    const { url, drop } = await postgres!.create();
    const receiver = await streamReceiver();
    receiver.hang = true;
    const server = await startServer({ ...databaseEnv({ url }), ...ENV, WEBHOOK_TIMEOUT: '3', AUDIT_STREAM_LEASE_MS: '3500', SIGNUP_LIMIT_ADDRESS: '0' });
    const db = new pg.Client({ connectionString: url });
    try {
      const client = makeClient(server.url);
      const { email, id } = await signUp(client, uniqueEmail('killed'));
      const token = (await logIn(client, email)).body['access-token'] as string;
      const owner = { id, email, token };
      const remote = { client } as Parameters<typeof as>[0];
      const orgId = await createOrg(remote, owner, 'Doomed');
      // a stream needs a proven address
      await db.connect();
      await db.query('update account set email_verified = true where id = $1', [id]);
      const stream = await createStream(remote, owner, orgId, { kind: 'https', url: `${receiver.url}/killed` });
      receiver.secrets['/killed'] = stream.secret;
      for (let i = 0; i < 5; i++) assert.equal((await as(remote, owner, 'PATCH', `/api/orgs/${orgId}`, { name: `Doomed ${i}` })).status, 200);
      // a batch is on its way and never answered: the process dies in the middle of it
      const inFlight = await waitFor('a batch in flight', () => receiver.hung[0]);
      server.child.kill('SIGKILL');
      await server.exited;
      const left = await db.query('select batch_id, locked_by from audit_stream where id = $1', [stream.id]);
      assert.equal(left.rows[0].batch_id, inFlight, 'the batch was fixed before it was sent');
      const owed = Number((await db.query('select count(*) as n from audit_stream_entry where stream_id = $1', [stream.id])).rows[0].n);
      assert.ok(owed >= 6, `every entry still owed (${owed})`);

      receiver.hang = false;
      const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
      const next = await startSystem(shared, ENV);
      try {
        await waitFor(
          'everything delivered by the next instance',
          async () => Number((await db.query('select count(*) as n from audit_stream_entry where stream_id = $1', [stream.id])).rows[0].n) === 0,
          30_000,
        );
        const batches = receiver.batches.filter((b) => b.path === '/killed');
        assert.equal(batches[0].id, inFlight, 'the same batch first, under the same id');
        const first = batches[0].entries[0];
        assert.equal(first.action, 'audit-stream.created');
        const actions = unique(batches.flatMap((b) => b.entries)).map((e) => e.action);
        assert.deepEqual(actions, ['audit-stream.created', ...Array(5).fill('org.renamed')]);
      } finally {
        await next.stop();
      }
    } finally {
      server.child.kill('SIGKILL');
      await db.end().catch(() => undefined);
      await receiver.close();
      await drop();
    }
  });
});
