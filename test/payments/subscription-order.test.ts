/**
 * Subscription events Stripe's order cannot settle (docs/billing.md, "What the webhook does",
 * Order), on one system per storage kind with the local Stripe stand-in: `canceled` is final for
 * a subscription id (a same-second `updated` after `deleted` does not revive it, nor does any
 * later event), a re-subscription (a new id) still activates, and events of one subscription that
 * share a `created` second are settled by re-reading the subscription from Stripe through the
 * Stripe sync, whatever their arrival order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { billingEnv, deliver, stripeEvent, subscription } from '../billing/support.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';
import { eventually } from '../billing/usage-support.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const now = () => Math.floor(Date.now() / 1000);

for (const db of testDatabases()) {
  describe(`Subscription events out of Stripe's order on ${db.name}`, () => {
    let stripe: FakeStripe;
    let t: TestSystem;
    let owner: TestAccount;
    const statusOf = async (org: string) => (await as(t, owner, 'GET', `/api/orgs/${org}`)).body.subscription.status as string;
    /** An organization with an active subscription `sub` of customer `cus`, created at `at`. */
    const subscribed = async (name: string, cus: string, sub: string, at: number) => {
      const org = await createOrg(t, owner, name);
      await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: cus, subscription: sub }, at));
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.created',
          subscription({ id: sub, customer: cus, status: 'active', price: 'price_pro_2024', periodEnd: at + 86400 }),
          at,
        ),
      );
      assert.equal(await statusOf(org), 'active');
      return org;
    };
    const updated = (sub: string, cus: string, status: string, at: number) =>
      stripeEvent('customer.subscription.updated', subscription({ id: sub, customer: cus, status, price: 'price_pro_2024', periodEnd: at + 86400 }), at);

    before(async () => {
      stripe = await startFakeStripe();
      t = await startSystem(db, billingEnv(stripe.url, { BILLING_SYNC_POLL_MS: '50', BILLING_RETRY_SCHEDULE: '0.1' }));
      owner = await account(t);
    });
    after(async () => {
      await t?.stop();
      await stripe?.close();
    });

    it('keeps a canceled subscription canceled: a same-second updated after deleted, or any later event, does not revive it', async () => {
      const at = now() - 60;
      const org = await subscribed('Revival Co', 'cus_revive', 'sub_revive', at);
      const ended = at + 10;
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.deleted',
          subscription({ id: 'sub_revive', customer: 'cus_revive', status: 'canceled', price: 'price_pro_2024', periodEnd: ended }),
          ended,
        ),
      );
      assert.equal(await statusOf(org), 'canceled');
      // one action's events share a second and come in any order
      await deliver(t, updated('sub_revive', 'cus_revive', 'active', ended));
      assert.equal(await statusOf(org), 'canceled', 'a same-second update does not revive it');
      await deliver(t, updated('sub_revive', 'cus_revive', 'active', ended + 5));
      assert.equal(await statusOf(org), 'canceled', 'nor a later one: canceled is final for the subscription id');

      // a real re-subscription is a new subscription id: it activates, even in the same second
      await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: 'cus_revive', subscription: 'sub_again' }, ended + 5));
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.created',
          subscription({ id: 'sub_again', customer: 'cus_revive', status: 'active', price: 'price_team_2024', periodEnd: ended + 86400 }),
          ended + 5,
        ),
      );
      const after = (await as(t, owner, 'GET', `/api/orgs/${org}`)).body.subscription;
      assert.deepEqual([after.status, after.plan], ['active', 'team']);
    });

    it('applies a final event that arrives after a newer one: an ended subscription is ended whatever the order', async () => {
      const at = now() - 60;
      const org = await subscribed('Late End Co', 'cus_late', 'sub_late', at);
      await deliver(t, updated('sub_late', 'cus_late', 'active', at + 20));
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.deleted',
          subscription({ id: 'sub_late', customer: 'cus_late', status: 'canceled', price: 'price_pro_2024', periodEnd: at + 10 }),
          at + 10,
        ),
      );
      assert.equal(await statusOf(org), 'canceled');
    });

    it('settles events of one subscription that share a second by what Stripe says now, not by their arrival', async () => {
      const at = now() - 60;
      const org = await subscribed('Tie Co', 'cus_tie', 'sub_tie', at);
      const reads = () => stripe.requests.filter((r) => r.method === 'GET' && r.path === '/v1/subscriptions/sub_tie').length;
      // Stripe has it active; the past_due event of the same second arrives last
      stripe.subscriptions.sub_tie = subscription({ id: 'sub_tie', customer: 'cus_tie', status: 'active', price: 'price_pro_2024', periodEnd: at + 86400 });
      await deliver(t, updated('sub_tie', 'cus_tie', 'active', at + 10));
      await deliver(t, updated('sub_tie', 'cus_tie', 'past_due', at + 10));
      await eventually('the re-read', () => reads() >= 1);
      await eventually('active, as Stripe has it', async () => (await statusOf(org)) === 'active');
      // the other way round: Stripe has it past due; the active event of the same second arrives last
      stripe.subscriptions.sub_tie = subscription({ id: 'sub_tie', customer: 'cus_tie', status: 'past_due', price: 'price_pro_2024', periodEnd: at + 86400 });
      await deliver(t, updated('sub_tie', 'cus_tie', 'past_due', at + 20));
      await deliver(t, updated('sub_tie', 'cus_tie', 'active', at + 20));
      await eventually('past due, as Stripe has it', async () => (await statusOf(org)) === 'past-due');
      assert.ok(reads() >= 2);
      // events of different seconds need no re-read
      const before = reads();
      await deliver(t, updated('sub_tie', 'cus_tie', 'active', at + 30));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(reads(), before);
      assert.equal(await statusOf(org), 'active');
    });
  });
}
