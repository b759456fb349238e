// test-run: alone (it stops PostgreSQL: see scripts/run-tests.mjs)
/**
 * An audit log stream while PostgreSQL is gone, on a private PostgreSQL the test starts in a
 * temporary directory and a real server process: a batch is on its way when the database stops,
 * and the receiver accepts it while the worker cannot record that. Meanwhile requests answer 503
 * `service-unavailable` and the process stays up; once the database is back, with no restart,
 * that batch is sent again under the same id (once its lease has run out), then the rest: every
 * entry from the stream's creation on arrives, in order, the only repeats whole batches under
 * their own id, and the lag comes back to 0. The server still stops on SIGTERM.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { databaseEnv, startServer, type ServerProcess } from '../db/processes.js';
import { as, createOrg } from '../orgs/support.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { waitFor } from '../webhooks/support.js';
import { createStream, entriesSince, streamReceiver, type ReceivedBatch } from './support.js';

/** seconds; requests that need the database answer within it */
const DATABASE_TIMEOUT = 2;
/** the bound a test client waits for an answer: the timeout, and room for a busy machine */
const ANSWER_WITHIN_MS = (DATABASE_TIMEOUT + 3) * 1000;
const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  AUDIT_STREAM_POLL_MS: '20',
  AUDIT_STREAM_RETRY_SCHEDULE: '0.05',
  DATABASE_TIMEOUT: String(DATABASE_TIMEOUT),
  // a batch whose outcome could not be recorded is sent again once its lease runs out: a short one here
  WEBHOOK_TIMEOUT: '5',
  AUDIT_STREAM_LEASE_MS: '8000',
  SIGNUP_LIMIT_ADDRESS: '0',
};

interface Gate {
  url: string;
  /** requests wait (unanswered, not forwarded) while true */
  hold: boolean;
  /** the `webhook-id` of each request that was held */
  held: string[];
  /** forwards the held requests and stops holding */
  open(): void;
  close(): Promise<void>;
}

/** A plain http forwarder in front of `target` that can hold requests, so a batch is in flight exactly when the test wants. */
async function gateTo(target: string): Promise<Gate> {
  let waiting: Array<() => void> = [];
  const forward = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse) => {
    const upstream = request(new URL(path, target), { method, headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    upstream.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const go = () => forward(req.method ?? 'POST', req.url ?? '/', req.headers, Buffer.concat(chunks), res);
      if (!self.hold) return go();
      self.held.push(String(req.headers['webhook-id']));
      waiting.push(go);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const self: Gate = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: false,
    held: [],
    open() {
      self.hold = false;
      const go = waiting;
      waiting = [];
      for (const f of go) f();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return self;
}

/**
 * The batches as received, each repeat checked to be the batch just before it (one batch of a
 * stream is in flight at a time) with the same entries; the batches once each.
 */
function withoutRepeats(batches: readonly ReceivedBatch[]): ReceivedBatch[] {
  const once: ReceivedBatch[] = [];
  for (const batch of batches) {
    assert.ok(batch.id, 'every batch has an id');
    const last = once.at(-1);
    if (last && last.id === batch.id) {
      assert.deepEqual(batch.entries, last.entries, `a repeat of batch ${batch.id} is the whole batch again`);
      continue;
    }
    assert.ok(!once.some((b) => b.id === batch.id), `batch ${batch.id} comes again only right after itself`);
    once.push(batch);
  }
  return once;
}

describe('an audit log stream while PostgreSQL is gone', () => {
  it('loses nothing, keeps the order, repeats only a whole batch under its id, catches up by itself, and the server still stops', async () => {
    const postgres = await PrivatePostgres.create();
    const receiver = await streamReceiver();
    const gate = await gateTo(receiver.url);
    let server: ServerProcess | undefined;
    try {
      await postgres.start();
      const url = await postgres.createDatabase('streams');
      server = await startServer({ ...databaseEnv({ url }), ...ENV });
      const child = server.child;
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      const client = makeClient(server.url);
      const remote = { client } as Parameters<typeof as>[0];

      const { email, id } = await signUp(client, uniqueEmail('outage'));
      const owner = { id, email, token: (await logIn(client, email)).body['access-token'] as string };
      const orgId = await createOrg(remote, owner, 'Outage');
      // a stream needs a proven address
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        await db.query('update account set email_verified = true where id = $1', [id]);
      } finally {
        await db.end();
      }
      const created = await createStream(remote, owner, orgId, { kind: 'https', url: `${gate.url}/outage` });
      receiver.secrets['/outage'] = created.secret;
      const stream = async () => (await as(remote, owner, 'GET', `/api/orgs/${orgId}/audit-log/streams/${created.id}`)).body as Record<string, any>;
      const rename = async (tag: string) => {
        const res = await as(remote, owner, 'PATCH', `/api/orgs/${orgId}`, { name: `Outage ${tag}` });
        assert.equal(res.status, 200, res.text);
      };
      const firstRes = await as(remote, owner, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.created&target-id=${created.id}`);
      assert.equal(firstRes.body.entries.length, 1, firstRes.text);
      const first = firstRes.body.entries[0].id as string;

      for (let i = 0; i < 3; i++) await rename(`before ${i}`);
      await waitFor('the first entries delivered', async () => (await stream()).lag === 0);

      // a batch on its way when the database stops; the receiver takes it while the database is gone
      gate.hold = true;
      for (let i = 0; i < 5; i++) await rename(`during ${i}`);
      const inFlight = await waitFor('a batch in flight', () => gate.held[0]);
      await postgres.stop();
      const acceptedBefore = receiver.batches.length;
      gate.open();
      await waitFor('the batch accepted by the receiver', () => receiver.batches.length > acceptedBefore);
      assert.equal(receiver.batches.at(-1)!.id, inFlight);

      const whileDown = await client('PATCH', `/api/orgs/${orgId}`, {
        headers: { authorization: `Bearer ${owner.token}` },
        body: { name: 'Outage lost' },
        timeoutMs: ANSWER_WITHIN_MS,
      });
      assert.equal(whileDown.status, 503, whileDown.text);
      assert.equal(whileDown.body.type, 'service-unavailable');
      const statusWhileDown = await client('GET', `/api/orgs/${orgId}/audit-log/streams/${created.id}`, {
        headers: { authorization: `Bearer ${owner.token}` },
        timeoutMs: ANSWER_WITHIN_MS,
      });
      assert.equal(statusWhileDown.status, 503, statusWhileDown.text);
      // gone for a few seconds, the worker failing to reach its queue all along
      await sleep(2000);
      assert.equal((await client('GET', '/api/health/live', { timeoutMs: ANSWER_WITHIN_MS })).status, 200, 'the process is up');
      assert.equal(child.exitCode, null, 'the process is up');
      assert.equal(child.signalCode, null, 'the process is up');

      await postgres.start();
      await waitFor('ready again', async () => (await client('GET', '/api/health/ready', { timeoutMs: ANSWER_WITHIN_MS })).status === 200, 20_000);
      for (let i = 0; i < 5; i++) await rename(`after ${i}`);

      const expected = await entriesSince(remote, owner, orgId, first);
      assert.ok(!expected.some((e) => JSON.stringify(e.details).includes('Outage lost')), 'the change answered 503 was not made');
      const caughtUp = await waitFor(
        'the lag back to 0',
        async () => {
          const now = await stream();
          return now.lag === 0 ? now : undefined;
        },
        40_000,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}: the stream is ${JSON.stringify(await stream())}`);
      });
      assert.equal(caughtUp['last-error'], null);
      assert.equal(caughtUp.status, 'active');

      const batches = receiver.batches.filter((b) => b.path === '/outage');
      assert.ok(batches.filter((b) => b.id === inFlight).length >= 2, 'the batch whose outcome could not be recorded was sent again, under its id');
      const once = withoutRepeats(batches);
      const got = once.flatMap((b) => b.entries);
      assert.deepEqual(
        got.map((e) => e.id),
        expected.map((e) => e.id),
        'every entry from the stream on, once, oldest first',
      );
      assert.deepEqual(got, expected, 'each as the API answers it');

      // the worker said it could not reach its queue, and that it does again
      const ids = out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { id?: string }).id);
      assert.ok(ids.includes('audit-streams/poll-failed'), 'the outage logged');
      assert.ok(ids.includes('audit-streams/poll-recovered'), 'the recovery logged');

      child.kill('SIGTERM');
      const code = await Promise.race([server.exited, sleep(20_000, 'still running' as const, { ref: false })]);
      assert.equal(code, 0, 'stopped on SIGTERM');
    } finally {
      if (server && server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      await gate.close();
      await receiver.close();
      await postgres.dispose();
    }
  });
});
