/**
 * The billing page's events against a fake transport: the return from checkout read and taken
 * out of the address, the bounded wait for the subscription, the usage report locked by 402,
 * and checkout and portal leaving for the URL the server answers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { registerAccount } from '../../src/client/account/events.js';
import { routeOf } from '../../src/client/app.js';
import { billingQuery, registerBilling, SUCCESS_POLLS } from '../../src/client/billing/events.js';
import type { EventVector } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { registerOrgs, type Organization } from '../../src/client/orgs/events.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-0000000000b1';
const org = (status: Organization['subscription']['status'], plan: string | null = null): Organization => ({
  id: ORG,
  name: 'Acme',
  slug: 'acme',
  personal: false,
  'created-at': '2026-01-01T00:00:00.000Z',
  role: 'admin',
  subscription: { status, plan, 'current-period-end': null, 'cancel-at-period-end': false, 'has-customer': status !== 'none' },
});
const PLANS = {
  plans: [
    { id: 'pro', 'price-id': 'price_pro', features: ['usage-report'] },
    { id: 'basic', 'price-id': 'price_basic', features: [] },
  ],
  'trial-days': 14,
  'checkout-enabled': true,
};

function setup(handler: (req: TransportRequest) => TransportResponse | undefined) {
  const replaced: string[] = [];
  const assigned: string[] = [];
  const later: EventVector[] = [];
  const { core, requests, run } = fakeClient('billing', handler, { session: 'token' });
  registerAccount(core, { replaceUrl: (path) => replaced.push(path), download: () => undefined });
  registerOrgs(core, { storage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });
  registerBilling(core, { assign: (url) => assigned.push(url) });
  core.regFx('later', ({ event }: { event: EventVector }) => {
    later.push(event);
  });
  return { core, requests, replaced, assigned, later, run };
}

describe('client billing events', () => {
  it("routes /billing and reads the organization and the checkout's outcome from the query", () => {
    assert.equal(routeOf('/billing'), 'billing');
    assert.equal(routeOf(`/orgs/${ORG}/billing`), 'org-billing');
    assert.deepEqual(billingQuery(`?org=${ORG}&checkout=success`), { orgId: ORG, notice: 'success' });
    assert.deepEqual(billingQuery('?org=../../etc&checkout=maybe'), { orgId: undefined, notice: undefined });
  });

  it('after a successful checkout shows the notice once, and looks for the subscription a bounded number of times', async () => {
    let status: Organization['subscription']['status'] = 'none';
    const s = setup((req) => {
      if (callOf(req) === `GET /api/orgs/${ORG}`) return answer(org(status, status === 'none' ? null : 'pro'));
      if (callOf(req) === 'GET /api/billing/plans') return answer(PLANS);
      if (callOf(req) === `GET /api/orgs/${ORG}/reports/usage`) {
        return status === 'none'
          ? answer({ type: 'payment-required', message: 'pay', plans: ['pro', 'team'] }, 402)
          : answer({
              'window-days': 30,
              members: { total: 1, owners: 1, admins: 0, members: 0, 'joined-recently': 1 },
              invitations: { pending: 0, 'accepted-recently': 0 },
              'payment-events-recently': 2,
            });
      }
      return undefined;
    });
    await s.run(['billing/open', `?org=${ORG}&checkout=success`]);
    assert.deepEqual(s.replaced, [`/orgs/${ORG}/billing`], "the outcome leaves the address bar, for the organization's billing page");
    assert.equal(s.core.state.route, 'org-billing');
    const page = s.core.state.billingPage!;
    assert.equal(page.notice, 'success');
    assert.equal(page.org?.subscription.status, 'none');
    assert.equal(page.plans?.[0].id, 'pro');
    assert.deepEqual(page.usage, { status: 'locked', plans: ['pro'] }, "the plans that include the report, from the plans' answer");
    assert.deepEqual(s.later, [['billing/load-org', ORG]], 'it will look again');

    // the webhook has not arrived: every look schedules the next, until the budget is spent
    for (let i = 1; i < SUCCESS_POLLS + 3; i++) await s.run(s.later[s.later.length - 1]);
    assert.equal(s.later.length, SUCCESS_POLLS, 'bounded');
    assert.equal(s.requests.filter((r) => callOf(r) === `GET /api/orgs/${ORG}/reports/usage`).length, 0, 'the report is not asked for on no plan (no 402)');

    status = 'active';
    await s.run(['billing/load-org', ORG]);
    assert.equal(s.core.state.billingPage?.org?.subscription.status, 'active');
    assert.equal(s.core.state.billingPage?.usage?.status, 'ready', 'the report opens with the plan');
    await s.run(['billing/load-org', ORG]);
    assert.equal(s.requests.filter((r) => callOf(r) === `GET /api/orgs/${ORG}/reports/usage`).length, 1, 'asked for once');
  });

  it('does not ask for the report on a paid plan that does not include it', async () => {
    const s = setup((req) => {
      if (callOf(req) === `GET /api/orgs/${ORG}`) return answer(org('active', 'basic'));
      if (callOf(req) === 'GET /api/billing/plans') return answer(PLANS);
      return undefined;
    });
    await s.run(['billing/open', '', `/orgs/${ORG}/billing`]);
    assert.deepEqual(s.core.state.billingPage?.usage, { status: 'locked', plans: ['pro'] });
    assert.deepEqual(s.requests.map(callOf).sort(), ['GET /api/billing/plans', `GET /api/orgs/${ORG}`]);
  });

  it('loads the public pricing once', async () => {
    const s = setup((req) => (callOf(req) === 'GET /api/billing/plans' ? answer(PLANS) : undefined));
    await s.run(['pricing/load']);
    await s.run(['pricing/load']);
    assert.equal(s.core.state.pricing?.status, 'ready');
    assert.deepEqual(
      s.core.state.pricing?.plans?.map((p) => p.id),
      ['pro', 'basic'],
    );
    assert.equal(s.requests.length, 1);
  });

  it('sends the browser to the URL of the checkout and of the portal', async () => {
    const s = setup((req) => {
      if (callOf(req) === `GET /api/orgs/${ORG}`) return answer(org('active', 'pro'));
      if (callOf(req) === 'GET /api/billing/plans') return answer(PLANS);
      if (callOf(req) === `POST /api/orgs/${ORG}/billing/checkout`) return answer({ url: 'https://checkout.stripe.test/c/pay/cs_1' });
      if (callOf(req) === `POST /api/orgs/${ORG}/billing/portal`) return answer({ url: 'https://billing.stripe.test/p/session/bps_1' });
      return answer({}, 200);
    });
    await s.run(['billing/open', `?org=${ORG}`]);
    await s.run(['billing/checkout', 'pro']);
    const checkout = s.requests.find((r) => callOf(r) === `POST /api/orgs/${ORG}/billing/checkout`)!;
    assert.deepEqual(transitJson.decode(checkout.body!), { plan: 'pro' });
    await s.run(['billing/portal']);
    assert.deepEqual(s.assigned, ['https://checkout.stripe.test/c/pay/cs_1', 'https://billing.stripe.test/p/session/bps_1']);
    assert.equal(s.core.state.billingPage?.notice, undefined);
  });
});
