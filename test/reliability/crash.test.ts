/**
 * A crash (SIGKILL) in the middle of webhook processing: every event is either stored and
 * applied, or neither; redelivery then applies the rest exactly once.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import Stripe from 'stripe';
import { freePort } from '../support/net.js';
import { makeClient, type TestClient } from '../support/http.js';
import { testDatabases } from '../support/system.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const SECRET = 'whsec_crash_0123';
const stripe = new Stripe('sk_test_not_used');

async function startServer(databaseUrl: string): Promise<{ child: ChildProcess; client: TestClient }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, APP_ENV: 'test', DATABASE_URL: databaseUrl, PORT: String(port), STRIPE_WEBHOOK_SECRET: SECRET, LOG_CONSOLE: 'off' },
    stdio: 'ignore',
  });
  const client = makeClient(`http://127.0.0.1:${port}`);
  for (let i = 0; i < 150; i++) {
    if (
      await client('GET', '/api/health').then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return { child, client };
    await sleep(100);
  }
  throw new Error('the server did not start');
}

describe('crash during webhook processing', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, () => {
  it('stores nothing half-applied, and redelivery applies each event exactly once', async () => {
    const { url, drop } = await testDatabases()
      .find((d) => d.name === 'postgres')!
      .create();
    const db = new pg.Client({ connectionString: url });
    try {
      let server = await startServer(url);
      await db.connect();
      const accounts = Array.from({ length: 150 }, () => randomUUID());
      // accounts with their personal organizations (what sign-up makes); the events name the accounts, as checkouts before billing moved to organizations did
      for (const id of accounts) {
        await db.query(
          `with a as (insert into account (id, email, password_hash) values ($1, $2, 'x') returning id),
          o as (insert into organization (name, slug, personal, personal_account_id) select 'p', 'personal-' || replace(id::text, '-', ''), true, id from a returning id, personal_account_id)
          insert into membership (organization_id, account_id, role) select id, personal_account_id, 'owner' from o`,
          [id, `${id}@example.com`],
        );
      }
      const events = accounts.map((id, i) =>
        JSON.stringify({
          id: `evt_crash_${i}`,
          type: 'checkout.session.completed',
          created: 1_700_000_000 + i,
          data: { object: { client_reference_id: id, customer: `cus_crash_${i}` } },
        }),
      );
      const deliver = (client: TestClient, payload: string) =>
        client('POST', '/api/webhooks/stripe', {
          headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
          body: payload,
          freshConnection: true,
        }).catch(() => undefined);

      // deliveries in flight, then the process dies without warning
      const inFlight = events.map((e, i) => sleep(i * 2).then(() => deliver(server.client, e)));
      await sleep(120);
      server.child.kill('SIGKILL');
      await Promise.all(inFlight);

      const stored = await db.query<{ event_id: string; customer_id: string; linked: string | null }>(
        `select e.event_id, e.customer_id, o.billing_customer_id as linked
           from payment_event e left join organization o on o.billing_customer_id = e.customer_id`,
      );
      assert.ok(stored.rows.length < events.length, 'the crash came before every event was processed');
      console.log(`${stored.rows.length} of ${events.length} events were stored before the crash`);
      for (const row of stored.rows) assert.equal(row.linked, row.customer_id, `${row.event_id} is stored but not applied`);
      const linkedWithoutEvent = await db.query(`select count(*)::int as n from organization o where o.billing_customer_id is not null
        and not exists (select 1 from payment_event e where e.customer_id = o.billing_customer_id)`);
      assert.equal(linkedWithoutEvent.rows[0].n, 0, 'no effect was applied without its event being stored');

      server = await startServer(url);
      const redelivered = await Promise.all(events.map((e) => deliver(server.client, e)));
      assert.ok(redelivered.every((r) => r?.status === 200));
      assert.equal(redelivered.filter((r) => r?.body.duplicate === false).length, events.length - stored.rows.length);
      const counts = await db.query(
        `select count(*)::int as events, (select count(*)::int from organization where billing_customer_id is not null) as linked from payment_event`,
      );
      assert.deepEqual(counts.rows[0], { events: events.length, linked: events.length });
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.on('exit', resolve));
    } finally {
      await db.end().catch(() => undefined);
      await drop();
    }
  });
});
