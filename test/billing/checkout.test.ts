/**
 * Billing flows over HTTP against a local Stripe (test/billing/stripe-server.ts) that the
 * official client talks to: the plans, Checkout Sessions with the parameters Stripe documents
 * and an Idempotency-Key, the Customer Portal, who may, what a Stripe failure looks like (and
 * that the secret key shows nowhere), the plan gate on the usage report, cancellation on
 * deletion; and, on the same system, the webhook's mapping to organizations (webhook-cases.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { registerRouteGroup, route } from '../../src/http/routes.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { auditEntries, billingEnv, deliver, stripeEvent, subscription } from './support.js';
import { startFakeStripe, TEST_STRIPE_KEY, type FakeStripe } from './stripe-server.js';
import { webhookCases } from './webhook-cases.js';

for (const db of testDatabases()) {
  describe(`Billing flows on ${db.name}`, () => {
    let t: TestSystem;
    let stripe: FakeStripe;
    let owner: TestAccount;
    let admin: TestAccount;
    let member: TestAccount;
    let outsider: TestAccount;
    let org: string;
    const checkout = (who: TestAccount | undefined, orgId: string, plan: unknown) => as(t, who, 'POST', `/api/orgs/${orgId}/billing/checkout`, { plan });
    const portal = (who: TestAccount | undefined, orgId: string) => as(t, who, 'POST', `/api/orgs/${orgId}/billing/portal`, {});
    const usage = (who: TestAccount | undefined, orgId: string) => as(t, who, 'GET', `/api/orgs/${orgId}/reports/usage`);
    const lastRequest = () => stripe.requests.at(-1)!;

    before(async () => {
      stripe = await startFakeStripe();
      t = await startSystem(db, billingEnv(stripe.url));
      [owner, admin, member, outsider] = await Promise.all([account(t), account(t), account(t), account(t)]);
      org = await createOrg(t, owner, 'Paying Co');
      await addMember(t, org, owner, admin, 'admin');
      await addMember(t, org, owner, member, 'member');
    });
    after(async () => {
      await t?.stop();
      await stripe?.close();
    });

    it('lists the plans to anyone, with their prices from Stripe (read once), what they open, the trial and whether checkout works', async () => {
      const before = stripe.requests.length;
      const res = await t.client('GET', '/api/billing/plans');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        plans: [
          {
            id: 'pro',
            'price-id': 'price_pro_2024',
            name: 'Pro',
            amount: 1200,
            currency: 'usd',
            interval: 'month',
            'interval-count': 1,
            features: ['usage-report'],
          },
          {
            id: 'team',
            'price-id': 'price_team_2024',
            name: 'Team',
            amount: 4900,
            currency: 'usd',
            interval: 'month',
            'interval-count': 1,
            features: ['usage-report'],
          },
        ],
        'trial-days': 14,
        'checkout-enabled': true,
      });
      const reads = stripe.requests.slice(before);
      assert.deepEqual(reads.map((r) => `${r.method} ${r.path}`).sort(), ['GET /v1/prices/price_pro_2024', 'GET /v1/prices/price_team_2024']);
      assert.ok(reads.every((r) => r.authorization === `Bearer ${TEST_STRIPE_KEY}`));
      // cached: a second visitor costs Stripe nothing
      const again = await t.client('GET', '/api/billing/plans');
      assert.deepEqual(again.body, res.body);
      assert.equal(stripe.requests.length, before + 2);
    });

    it("makes a Checkout Session as Stripe documents it, with the organization as reference and the caller's email", async () => {
      const res = await checkout(admin, org, 'pro');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { url: `${stripe.url}/pay/checkout` });
      const sent = lastRequest();
      assert.equal(sent.method, 'POST');
      assert.equal(sent.path, '/v1/checkout/sessions');
      assert.equal(sent.authorization, `Bearer ${TEST_STRIPE_KEY}`);
      assert.match(sent.idempotencyKey ?? '', /^checkout-[A-Za-z0-9_-]{43}$/);
      assert.match(sent.stripeVersion ?? '', /^\d{4}-\d{2}-\d{2}/, 'the client pins its API version');
      const base = `${t.system.config.appUrl}/billing?org=${org}`;
      assert.deepEqual(sent.params, {
        mode: 'subscription',
        'line_items[0][price]': 'price_pro_2024',
        'line_items[0][quantity]': '1',
        client_reference_id: org,
        customer_email: admin.email,
        success_url: `${base}&checkout=success`,
        cancel_url: `${base}&checkout=canceled`,
        'metadata[organization_id]': org,
        'subscription_data[metadata][organization_id]': org,
        'subscription_data[trial_period_days]': '14',
      });
      const [entry] = (await auditEntries(t, org)).filter((e) => e.action === 'billing.checkout-started');
      assert.equal(entry.actor_account_id, admin.id);
      assert.deepEqual(
        { target: [entry.target_type, entry.target_id], plan: entry.details.plan, price: entry.details['price-id'] },
        { target: ['organization', org], plan: 'pro', price: 'price_pro_2024' },
      );
      assert.equal(entry.ip, '127.0.0.1');
    });

    it('answers a double click with the same session (same Idempotency-Key), and a changed request with a new one', async () => {
      const created = stripe.sessionsCreated;
      const [first, second] = await Promise.all([checkout(owner, org, 'team'), checkout(owner, org, 'team')]);
      assert.equal(first.status, 200, first.text);
      assert.equal(second.status, 200, second.text);
      const [a, b] = stripe.requests.slice(-2);
      assert.equal(a.idempotencyKey, b.idempotencyKey);
      assert.equal(stripe.sessionsCreated, created + 1, 'Stripe made one session for the two clicks');
      // another plan, or another caller, is another request
      await checkout(owner, org, 'pro');
      assert.notEqual(lastRequest().idempotencyKey, a.idempotencyKey);
      await checkout(admin, org, 'team');
      assert.notEqual(lastRequest().idempotencyKey, a.idempotencyKey);
      assert.equal(stripe.sessionsCreated, created + 3);
    });

    it('refuses an unknown plan with 400 and the plans there are, before calling Stripe', async () => {
      const calls = stripe.requests.length;
      const res = await checkout(owner, org, 'enterprise');
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.type, 'unknown-plan');
      assert.deepEqual(res.body.plans, ['pro', 'team']);
      assert.equal((await checkout(owner, org, 'PRO!')).body.type, 'request-coercion');
      assert.equal(stripe.requests.length, calls);
    });

    it('lets admins and owners in, members get 403, others 404, and without a token 401', async () => {
      for (const [who, status] of [
        [member, 403],
        [outsider, 404],
        [undefined, 401],
      ] as const) {
        assert.equal((await checkout(who, org, 'pro')).status, status);
        assert.equal((await portal(who, org)).status, status);
      }
      assert.equal((await checkout(outsider, '00000000-0000-4000-8000-000000000000', 'pro')).status, 404);
    });

    it('opens the portal only once the organization has a customer, with the return URL under /billing', async () => {
      const before = await portal(owner, org);
      assert.equal(before.status, 409, before.text);
      assert.equal(before.body.reason, 'no-customer');

      await deliver(
        t,
        stripeEvent('checkout.session.completed', {
          id: 'cs_done',
          object: 'checkout.session',
          client_reference_id: org,
          customer: 'cus_paying',
          subscription: 'sub_paying',
        }),
      );
      const got = await as(t, member, 'GET', `/api/orgs/${org}`);
      assert.equal(got.body.subscription['has-customer'], true);

      const res = await portal(admin, org);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { url: `${stripe.url}/pay/portal` });
      assert.equal(lastRequest().path, '/v1/billing_portal/sessions');
      assert.deepEqual(lastRequest().params, { customer: 'cus_paying', return_url: `${t.system.config.appUrl}/billing?org=${org}` });
      assert.ok((await auditEntries(t, org)).some((e) => e.action === 'billing.portal-opened' && e.actor_account_id === admin.id));
    });

    it("checks out with the organization's customer once it has one, and refuses while a subscription runs", async () => {
      const res = await checkout(owner, org, 'pro');
      assert.equal(res.status, 200, res.text);
      assert.equal(lastRequest().params.customer, 'cus_paying');
      assert.equal(lastRequest().params.customer_email, undefined);

      const end = Math.floor(Date.now() / 1000) + 30 * 86400;
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.created',
          subscription({ id: 'sub_paying', customer: 'cus_paying', status: 'active', price: 'price_pro_2024', periodEnd: end }),
        ),
      );
      const running = await checkout(owner, org, 'team');
      assert.equal(running.status, 409, running.text);
      assert.equal(running.body.reason, 'already-subscribed');

      // after a cancellation a new checkout is possible, without a second trial
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.deleted',
          subscription({ id: 'sub_paying', customer: 'cus_paying', status: 'canceled', price: 'price_pro_2024', periodEnd: end }),
        ),
      );
      assert.equal((await checkout(owner, org, 'pro')).status, 200);
      assert.equal(lastRequest().params['subscription_data[trial_period_days]'], undefined);
    });

    it("answers Stripe's failures with 502 payment-provider-error, never showing the secret key", async () => {
      const other = await createOrg(t, owner, 'Failing Co');
      try {
        stripe.fault = {
          kind: 'error',
          status: 400,
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'line_items[0][price]',
          message: "No such price: 'price_pro_2024'",
        };
        const missing = await checkout(owner, other, 'pro');
        assert.equal(missing.status, 502, missing.text);
        assert.equal(missing.body.type, 'payment-provider-error');
        assert.equal(missing.body.failure, 'invalid-request');
        assert.equal(missing.body['provider-code'], 'resource_missing');
        assert.equal(missing.body['provider-param'], 'line_items[0][price]');
        assert.match(missing.body['provider-request-id'], /^req_test_/);

        stripe.fault = {
          kind: 'error',
          status: 401,
          type: 'invalid_request_error',
          message: `Invalid API Key provided: ${TEST_STRIPE_KEY.slice(0, 12)}****6789`,
        };
        const refused = await checkout(owner, other, 'pro');
        assert.equal(refused.status, 502);
        assert.equal(refused.body.failure, 'authentication');
        assert.doesNotMatch(refused.text, /sk_test|\*\*\*\*/);

        // a dropped connection is retried by the client with the same key, then answered 502
        const before = stripe.requests.length;
        stripe.fault = { kind: 'drop' };
        const dropped = await checkout(owner, other, 'team');
        assert.equal(dropped.status, 502);
        assert.equal(dropped.body.failure, 'connection');
        const attempts = stripe.requests.slice(before);
        assert.equal(attempts.length, 3, 'the first attempt and two retries');
        assert.equal(new Set(attempts.map((r) => r.idempotencyKey)).size, 1);
      } finally {
        stripe.fault = undefined;
      }
      assert.ok(!(await t.logText()).includes(TEST_STRIPE_KEY.slice(8)), 'the key is in no log entry');
      assert.equal((await auditEntries(t, other)).filter((e) => e.action === 'billing.checkout-started').length, 0, 'a failed checkout records nothing');
    });

    it('gates the usage report: 402 with the plans until the organization pays for one of them', async () => {
      const gated = await createOrg(t, owner, 'Gated Co');
      await addMember(t, gated, owner, member, 'member');
      const denied = await usage(member, gated);
      assert.equal(denied.status, 402, denied.text);
      assert.deepEqual(
        { type: denied.body.type, plans: denied.body.plans, status: denied.body.status },
        { type: 'payment-required', plans: ['pro', 'team'], status: 'none' },
      );
      assert.equal((await usage(outsider, gated)).status, 404, 'a non-member learns nothing of the plan');
      assert.equal((await usage(undefined, gated)).status, 401);

      await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: gated, customer: 'cus_gated', subscription: 'sub_gated' }));
      const end = Math.floor(Date.now() / 1000) + 86400;
      // a grandfathered price of the plan counts as the plan
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.created',
          subscription({ id: 'sub_gated', customer: 'cus_gated', status: 'trialing', price: 'price_pro_2023', periodEnd: end }),
          Math.floor(Date.now() / 1000) - 5,
        ),
      );
      const open = await usage(member, gated);
      assert.equal(open.status, 200, open.text);
      assert.equal(open.body['organization-id'], gated);
      assert.deepEqual(open.body.members, { total: 2, owners: 1, admins: 0, members: 1, 'joined-recently': 2 });
      assert.equal(open.body['payment-events-recently'], 2);

      await deliver(t, stripeEvent('invoice.payment_failed', { object: 'invoice', customer: 'cus_gated', subscription: 'sub_gated', amount_paid: 0 }));
      const pastDue = await usage(member, gated);
      assert.equal(pastDue.status, 402);
      assert.deepEqual({ status: pastDue.body.status, plan: pastDue.body.plan }, { status: 'past-due', plan: 'pro' });
      await deliver(t, stripeEvent('invoice.paid', { object: 'invoice', customer: 'cus_gated', subscription: 'sub_gated', amount_paid: 2900 }));
      assert.equal((await usage(member, gated)).status, 200);
    });

    it('cancels a running subscription before its organization is deleted; a Stripe failure keeps the organization', async () => {
      const doomed = await createOrg(t, owner, 'Doomed Co');
      await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: doomed, customer: 'cus_doomed', subscription: 'sub_doomed' }));
      await deliver(
        t,
        stripeEvent(
          'customer.subscription.created',
          subscription({
            id: 'sub_doomed',
            customer: 'cus_doomed',
            status: 'active',
            price: 'price_team_2024',
            periodEnd: Math.floor(Date.now() / 1000) + 86400,
          }),
        ),
      );
      stripe.fault = { kind: 'error', status: 500, type: 'api_error', message: "Something went wrong on Stripe's end." };
      try {
        const failed = await as(t, owner, 'DELETE', `/api/orgs/${doomed}`);
        assert.equal(failed.status, 502, failed.text);
        assert.equal(failed.body.type, 'payment-provider-error');
      } finally {
        stripe.fault = undefined;
      }
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${doomed}`)).status, 200, 'still there');
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${doomed}`)).status, 204);
      assert.deepEqual(stripe.canceled, ['sub_doomed']);
      assert.equal(lastRequest().method, 'DELETE');
      assert.equal(lastRequest().path, '/v1/subscriptions/sub_doomed');

      // an account's deletion takes the organizations it alone owns, and cancels what they pay for; one Stripe no longer has is no obstacle
      const leaving = await account(t);
      const [first, second] = [await createOrg(t, leaving, 'Leaving One'), await createOrg(t, leaving, 'Leaving Two')];
      for (const [orgId, sub] of [
        [first, 'sub_leaving'],
        [second, 'sub_gone_leaving'],
      ]) {
        await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: orgId, customer: `cus_${sub}`, subscription: sub }));
        await deliver(
          t,
          stripeEvent(
            'customer.subscription.created',
            subscription({ id: sub, customer: `cus_${sub}`, status: 'trialing', price: 'price_pro_2024', periodEnd: Math.floor(Date.now() / 1000) + 86400 }),
          ),
        );
      }
      const gone = await as(t, leaving, 'POST', '/api/account/delete', { password: PASSWORD });
      assert.equal(gone.status, 204, gone.text);
      assert.deepEqual(stripe.canceled, ['sub_doomed', 'sub_leaving']);
      const left = await t.system.database.db.selectFrom('organization').select('id').where('id', 'in', [first, second]).execute();
      assert.deepEqual(left, []);
    });

    it('documents the gate and the billing routes in the OpenAPI document', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      const report = doc.paths['/api/orgs/{id}/reports/usage'].get;
      assert.equal(report['x-requires-feature'], 'usage-report');
      assert.ok(report.responses['402']);
      assert.match(report.description, /Needs a plan with the feature `usage-report` \(402 `payment-required`/);
      assert.equal(doc.paths['/api/orgs/{id}/billing/checkout'].post['x-org-role'], 'admin');
      assert.ok(doc.paths['/api/orgs/{id}/billing/portal'].post.responses['409']);
      assert.equal(doc.paths['/api/billing/plans'].get.security, undefined);
    });

    describe('the webhook, on organizations', () => webhookCases(() => ({ t, owner })));
  });
}

describe('requires (plans) route data', () => {
  const definition = (extra: Record<string, unknown>) => ({
    ...route({
      method: 'GET',
      path: '/orgs/:id/paid',
      summary: 'probe',
      schemas: { params: Type.Object({ id: Type.String() }), response: { 200: Type.Object({}) } },
      handler: () => ({}),
    }),
    ...extra,
  });
  const memberships = async () => undefined;
  const subscriptions = async () => undefined;

  it('refuses at start-up plans without orgRole, without a subscriptions resolver, or with no plan', () => {
    assert.throws(
      () => registerRouteGroup(Fastify(), { prefix: '/api', memberships, subscriptions, routes: [definition({ requires: { plans: ['pro'] } })] }),
      /needs orgRole/,
    );
    assert.throws(
      () => registerRouteGroup(Fastify(), { prefix: '/api', memberships, routes: [definition({ orgRole: 'member', requires: { plans: ['pro'] } })] }),
      /subscriptions resolver/,
    );
    assert.throws(
      () => registerRouteGroup(Fastify(), { prefix: '/api', memberships, subscriptions, routes: [definition({ orgRole: 'member', requires: { plans: [] } })] }),
      /at least one plan/,
    );
    assert.doesNotThrow(() =>
      registerRouteGroup(Fastify(), { prefix: '/api', memberships, subscriptions, routes: [definition({ orgRole: 'member', requires: { plans: ['pro'] } })] }),
    );
  });
});
