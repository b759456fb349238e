/**
 * One Stripe account outlives a database (docs/billing.md, "When Stripe is down"; docs/security.md,
 * "Billing (Stripe)"): two databases in turn on ONE Stripe stand-in, which keeps idempotency keys
 * (24 h, account-wide) and meter identifiers as Stripe does. Job ids start at 1 again in the
 * second database; its seat quantities, meter events and checkouts still reach Stripe. A key
 * Stripe refuses (`idempotency_error`) is an error and goes again under a new key; a refusal as a
 * duplicate identifier counts as sent only for an identifier of ours.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { account, as, createOrg } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { IDEMPOTENCY_TTL_MS, startFakeStripe, TEST_STRIPE_KEY, type FakeStripe } from './stripe-server.js';
import { eventually, subscribeTeam, usageEnv } from './usage-support.js';

const OWN_KEY = /^(seats|usage)-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const db of testDatabases()) {
  describe(`Stripe keys across two databases on ${db.name}`, () => {
    let stripe: FakeStripe;
    let t: TestSystem | undefined;
    before(async () => {
      stripe = await startFakeStripe();
    });
    after(async () => {
      await t?.stop();
      await stripe?.close();
    });

    /** A fresh database on the same Stripe: an organization on `team` that invites one person and makes one API call. */
    const lifeOfADatabase = async () => {
      // the database before is gone (a reset); Stripe stays
      await t?.stop();
      t = await startSystem(db, usageEnv(stripe.url));
      const owner = await account(t);
      const org = await createOrg(t, owner, 'Keys');
      const { customer, items } = await subscribeTeam(t, org, 1);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/invitations`, { email: `keys-${org}@example.com`, role: 'member' })).status, 201);
      const key = await as(t, owner, 'POST', `/api/orgs/${org}/api-keys`, { name: 'k', role: 'member' });
      assert.equal((await t.client('GET', `/api/orgs/${org}`, { headers: { authorization: `Bearer ${key.body.key}` } })).status, 200);
      await eventually('the seat quantity in Stripe', () => stripe.itemUpdates.some((u) => u.item === items.seat && u.quantity === 2));
      await eventually('the meter event in Stripe', () => stripe.meterEvents.some((e) => e.customer === customer && e.value === 1));
      const checkout = await as(t, owner, 'POST', `/api/orgs/${await createOrg(t, owner, 'Buyer')}/billing/checkout`, { plan: 'team' });
      assert.equal(checkout.status, 200, checkout.text);
      const jobs = await sql<{ id: string; idempotency_key: string }>`select id, idempotency_key from billing_job order by id`.execute(t.system.database.db);
      return { t, owner, org, customer, items, jobs: jobs.rows };
    };

    it('sends seats, meter events and checkouts from a second database on the same Stripe account', async () => {
      const first = await lifeOfADatabase();
      const second = await lifeOfADatabase();
      assert.deepEqual(
        second.jobs.map((j) => j.id),
        first.jobs.map((j) => j.id),
        'the job ids start again',
      );
      assert.ok(
        second.jobs.every((j) => OWN_KEY.test(j.idempotency_key)),
        JSON.stringify(second.jobs),
      );
      const keys = stripe.requests.filter((r) => r.idempotencyKey).map((r) => r.idempotencyKey);
      assert.equal(new Set(keys).size, keys.length, 'no key is used twice');
    });

    it('logs a refused key as an error and sends again under a new key; counts a duplicate identifier as sent only when it is ours', async () => {
      const { t: sys, org, customer, items } = await lifeOfADatabase();
      const db = sys.system.database.db;
      // a seat job whose key Stripe saw with other parameters (an older key form, another database's job)
      const foreign = stripe.itemUpdates[0].key!;
      await sql`insert into billing_job (organization_id, kind, idempotency_key, quantity, attempts) values (${org}, 'seats', ${foreign}, 5, 1)`.execute(db);
      await eventually('quantity 5 under a new key', () => stripe.itemUpdates.some((u) => u.item === items.seat && u.quantity === 5));
      const applied = stripe.itemUpdates.find((u) => u.item === items.seat && u.quantity === 5)!;
      assert.notEqual(applied.key, foreign);
      assert.match(applied.key ?? '', OWN_KEY);
      const refusal = (await sys.logEntries()).find((e) => e.id === 'billing-sync/key-refused');
      assert.equal(refusal?.level, 'error');
      assert.equal(refusal?.data.error, 'idempotency_error');
      assert.equal(refusal?.data['organization-id'], org);
      assert.ok(refusal?.data['job-id'], 'names the job');

      // a meter event of the older identifier form, which Stripe has from another database (its idempotency key long forgotten)
      const legacy = `usage-${Date.now()}`;
      const seeded = await fetch(`${stripe.url}/v1/billing/meter_events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_STRIPE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ event_name: 'api_calls', 'payload[stripe_customer_id]': 'cus_elsewhere', 'payload[value]': '9', identifier: legacy }),
      });
      assert.equal(seeded.status, 200);
      stripe.identifierTtlMs = 3 * IDEMPOTENCY_TTL_MS;
      stripe.clockOffsetMs = IDEMPOTENCY_TTL_MS + 60_000;
      await sql`insert into billing_job (organization_id, kind, meter, idempotency_key, value, event_at, attempts)
        values (${org}, 'meter', 'api-calls', ${legacy}, 3, now(), 1)`.execute(db);
      await eventually('our 3 calls in Stripe', () => stripe.meterEvents.some((e) => e.customer === customer && e.value === 3));
      const ours = stripe.meterEvents.find((e) => e.customer === customer && e.value === 3)!;
      assert.match(ours.identifier, OWN_KEY);
      const refusals = (await sys.logEntries()).filter((e) => e.id === 'billing-sync/key-refused');
      assert.ok(refusals.some((e) => e.data.error === 'duplicate_meter_event' && e.level === 'error'));
    });
  });
}
