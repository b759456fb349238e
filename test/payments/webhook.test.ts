import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { logIn, signUp } from '../support/auth.js';
import { browserSession } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const stripe = new Stripe('sk_test_not_used');
const SECRET = 'whsec_current_0123456789';
const OLD_SECRET = 'whsec_previous_0123456789';
let seq = 0;

function event(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return { id: `evt_${Date.now()}_${seq++}`, object: 'event', type, created, data: { object } };
}

function signed(payload: string, secret = SECRET, timestamp?: number): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) };
}

for (const db of testDatabases()) {
  describe(`Stripe webhook on ${db.name}`, () => {
    let t: TestSystem;
    const deliver = (payload: string, headers: Record<string, string> = signed(payload)) =>
      t.client('POST', '/api/webhooks/stripe', { headers, body: payload });
    const accountOf = async (email: string) => {
      const login = await logIn(t.client, email);
      return (await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${login.body['access-token']}` } })).body;
    };
    const storedEvents = async (id: string) =>
      (await t.system.database.db.selectFrom('payment_event').select('event_id').where('event_id', '=', id).execute()).length;

    before(async () => {
      t = await startSystem(db, { STRIPE_WEBHOOK_SECRET: `${SECRET},${OLD_SECRET}`, LOGIN_LIMIT_EMAIL: '0', LOGIN_LIMIT_ADDRESS: '0' });
    });
    after(async () => t?.stop());

    it('accepts exactly what Stripe signs, with either rotated secret, and stores each event once', async () => {
      const payload = JSON.stringify(event('charge.succeeded', { customer: 'cus_x' }));
      const first = await deliver(payload);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body, { received: true, duplicate: false });
      const again = await deliver(payload, signed(payload, OLD_SECRET));
      assert.deepEqual(again.body, { received: true, duplicate: true });
      assert.equal(await storedEvents(JSON.parse(payload).id), 1);
    });

    it('refuses bad signatures with 400 invalid-signature and stores nothing', async () => {
      const e = event('charge.succeeded', {});
      const payload = JSON.stringify(e);
      const now = Math.floor(Date.now() / 1000);
      const tampered = payload.replace('charge', 'chargE');
      const cases: Record<string, [string, Record<string, string>]> = {
        'wrong secret': [payload, signed(payload, 'whsec_wrong')],
        'stale timestamp': [payload, signed(payload, SECRET, now - 330)],
        'future timestamp': [payload, signed(payload, SECRET, now + 330)],
        'missing header': [payload, { 'content-type': 'application/json' }],
        'garbled header': [payload, { 'content-type': 'application/json', 'stripe-signature': 't=abc,v1=zz' }],
        'body changed by one byte': [tampered, signed(payload)],
      };
      for (const [name, [body, headers]] of Object.entries(cases)) {
        const res = await deliver(body, headers);
        assert.equal(res.status, 400, name);
        assert.equal(res.body.type, 'invalid-signature', name);
      }
      assert.equal(await storedEvents(e.id as string), 0);
    });

    it('refuses a verified payload that is not an event, storing nothing', async () => {
      for (const payload of ['{"object":"event"}', 'not json at all', '{"id":"evt_no_type"}']) {
        const res = await deliver(payload);
        assert.equal(res.status, 400, payload);
        assert.equal(res.body.type, 'invalid-event');
      }
      assert.equal(await storedEvents('evt_no_type'), 0);
    });

    it('refuses signed events whose times no calendar holds with 400 invalid-event, so Stripe stops retrying', async () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['created 8.6e12', event('charge.succeeded', {}, 8.6e12)],
        ['created past 9999', event('charge.succeeded', {}, 253_402_300_800)],
        ['created negative', event('charge.succeeded', {}, -1)],
        ['created fractional', event('charge.succeeded', {}, 1_700_000_000.5)],
        ['period end 8.6e12', event('customer.subscription.updated', { customer: 'cus_time', status: 'active', current_period_end: 8.6e12 })],
        [
          'item period end 1e300',
          event('customer.subscription.updated', { customer: 'cus_time', status: 'active', items: { data: [{ current_period_end: 1e300 }] } }),
        ],
      ];
      for (const [name, e] of cases) {
        const res = await deliver(JSON.stringify(e));
        assert.equal(res.status, 400, `${name}: ${res.text}`);
        assert.equal(res.body.type, 'invalid-event', name);
        assert.equal(await storedEvents(e.id as string), 0, name);
      }
      // the last second of 9999 is still a time
      assert.equal((await deliver(JSON.stringify(event('charge.succeeded', {}, 253_402_300_799)))).status, 200);
    });

    it('answers an unknown provider with 404, and needs no CSRF token', async () => {
      assert.equal((await t.client('POST', '/api/webhooks/paypal', { body: '{}' })).status, 404);
      const browser = await browserSession(t.client);
      const payload = JSON.stringify(event('ping', {}));
      const res = await deliver(payload, { ...signed(payload), cookie: browser.cookie });
      assert.equal(res.status, 200);
    });

    it('applies twenty concurrent deliveries of one event exactly once', async () => {
      const { email, id } = await signUp(t.client);
      await deliver(JSON.stringify(event('checkout.session.completed', { client_reference_id: id, customer: 'cus_race' })));
      const payload = JSON.stringify(event('invoice.payment_failed', { customer: 'cus_race' }));
      const results = await Promise.all(Array.from({ length: 20 }, () => deliver(payload)));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(20).fill(200),
      );
      assert.equal(results.filter((r) => r.body.duplicate === false).length, 1);
      assert.equal(await storedEvents(JSON.parse(payload).id), 1);
      assert.equal((await accountOf(email)).subscription.status, 'past-due');
    });

    it('links the customer on checkout and follows the subscription through its life', async () => {
      const { email, id } = await signUp(t.client);
      const now = Math.floor(Date.now() / 1000);
      const sub = (status: string, created: number, type = 'customer.subscription.updated') =>
        event(type, { id: 'sub_1', customer: 'cus_life', status, items: { data: [{ price: { id: 'price_pro' }, current_period_end: now + 86400 }] } }, created);

      // a subscription event before the checkout completion is kept and adopted on linking
      assert.equal((await deliver(JSON.stringify(sub('trialing', now - 50, 'customer.subscription.created')))).status, 200);
      await deliver(JSON.stringify(event('checkout.session.completed', { client_reference_id: id, customer: 'cus_life' }, now - 40)));
      let account = await accountOf(email);
      assert.deepEqual(account.subscription, { status: 'trialing', plan: 'price_pro', 'current-period-end': new Date((now + 86400) * 1000).toISOString() });

      await deliver(JSON.stringify(sub('active', now - 30)));
      assert.equal((await accountOf(email)).subscription.status, 'active');

      // an older event arriving late does not overwrite the newer state
      await deliver(JSON.stringify(sub('past_due', now - 35)));
      assert.equal((await accountOf(email)).subscription.status, 'active');

      await deliver(JSON.stringify(event('invoice.payment_failed', { customer: 'cus_life' }, now - 20)));
      assert.equal((await accountOf(email)).subscription.status, 'past-due');

      await deliver(JSON.stringify(sub('canceled', now - 10, 'customer.subscription.deleted')));
      account = await accountOf(email);
      assert.equal(account.subscription.status, 'canceled');
      assert.equal(account.subscription.plan, 'price_pro');
    });

    it('takes the plan from plan.id when an item has no price', async () => {
      const { email, id } = await signUp(t.client);
      await deliver(JSON.stringify(event('checkout.session.completed', { client_reference_id: id, customer: 'cus_plan' })));
      await deliver(
        JSON.stringify(
          event('customer.subscription.created', {
            customer: 'cus_plan',
            status: 'active',
            current_period_end: 1900000000,
            items: { data: [{ plan: { id: 'plan_legacy' } }] },
          }),
        ),
      );
      const account = await accountOf(email);
      assert.equal(account.subscription.plan, 'plan_legacy');
      assert.equal(account.subscription['current-period-end'], new Date(1900000000 * 1000).toISOString());
    });
  });
}
