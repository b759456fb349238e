/**
 * The plans' prices (GET /api/billing/plans, issue 31): read from Stripe's Prices API through the
 * gateway once per cache period for all callers together; without Stripe, or while it fails, the
 * plans come without prices (and a failed read is tried again sooner than a refresh).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DB } from '../../src/db/database.js';
import type { Logger } from '../../src/logging/logger.js';
import { PRICE_CACHE_MS, PRICE_RETRY_MS } from '../../src/billing/plan-offer.js';
import { BillingService } from '../../src/billing/service.js';
import { envCatalogue, parsePlans, STRIPE_API_URL } from '../../src/billing/settings.js';
import { StripeGatewayError, type BillingGateway, type PriceDetails } from '../../src/billing/stripe-gateway.js';

const plans = parsePlans('pro=price_pro_m,pro-yearly=price_pro_y', (v, p) => new Error(`${v} ${p}`));
const settings = {
  secretKey: 'sk_test_x',
  apiUrl: new URL(STRIPE_API_URL),
  trialDays: 0,
  plans,
  catalogue: envCatalogue(plans),
  proration: 'create_prorations' as const,
  retryScheduleMs: [5000],
};
const PRICES: Record<string, PriceDetails> = {
  price_pro_m: { id: 'price_pro_m', name: 'Pro', amount: 1500, currency: 'eur', interval: 'month', intervalCount: 1 },
  price_pro_y: { id: 'price_pro_y', name: 'Pro', amount: 15000, currency: 'eur', interval: 'year', intervalCount: 1 },
};

function setup() {
  let now = Date.parse('2026-06-01T00:00:00Z');
  const warnings: string[] = [];
  const reads: string[] = [];
  let failing = false;
  const gateway = {
    async retrievePrice(id: string) {
      reads.push(id);
      if (failing) throw new StripeGatewayError('connection', undefined, undefined, undefined, undefined);
      return PRICES[id];
    },
  } as unknown as BillingGateway;
  const log = { warn: (event: string) => warnings.push(event) } as unknown as Logger;
  const billing = new BillingService({
    db: undefined as unknown as DB,
    settings,
    appUrl: 'https://app.example.com',
    gateway,
    log,
    clock: () => new Date(now),
  });
  billing.offer({ id: 'usage-report', plans: ['pro-yearly'] });
  return {
    billing,
    reads,
    warnings,
    fail: (f: boolean) => {
      failing = f;
    },
    pass: (ms: number) => {
      now += ms;
    },
  };
}

describe("the plans' prices from Stripe", () => {
  it('answers name, amount, currency and interval per plan, with the features each opens', async () => {
    const { billing } = setup();
    assert.deepEqual((await billing.plans()).plans, [
      { id: 'pro', 'price-id': 'price_pro_m', name: 'Pro', amount: 1500, currency: 'eur', interval: 'month', 'interval-count': 1, features: [] },
      {
        id: 'pro-yearly',
        'price-id': 'price_pro_y',
        name: 'Pro',
        amount: 15000,
        currency: 'eur',
        interval: 'year',
        'interval-count': 1,
        features: ['usage-report'],
      },
    ]);
  });

  it('reads Stripe once for concurrent and later callers until the cache period ends', async () => {
    const { billing, reads, pass } = setup();
    await Promise.all([billing.plans(), billing.plans(), billing.plans()]);
    assert.equal(reads.length, 2);
    pass(PRICE_CACHE_MS - 1);
    await billing.plans();
    assert.equal(reads.length, 2);
    pass(2);
    await billing.plans();
    assert.equal(reads.length, 4);
  });

  it('lists the plans without prices while Stripe fails, says so once per try, and tries again after the retry period', async () => {
    const { billing, reads, warnings, fail, pass } = setup();
    fail(true);
    assert.deepEqual(
      (await billing.plans()).plans.map((p) => Object.keys(p).sort()),
      [
        ['features', 'id', 'price-id'],
        ['features', 'id', 'price-id'],
      ],
    );
    assert.deepEqual(warnings, ['billing/prices-unavailable']);
    await billing.plans();
    assert.equal(reads.length, 2, 'no new read within the retry period');
    fail(false);
    pass(PRICE_RETRY_MS + 1);
    assert.equal((await billing.plans()).plans[0].amount, 1500);
  });

  it('lists the plan ids alone without Stripe', async () => {
    const billing = new BillingService({
      db: undefined as unknown as DB,
      settings,
      appUrl: 'https://app.example.com',
      gateway: undefined,
      log: undefined as unknown as Logger,
    });
    const body = await billing.plans();
    assert.deepEqual(body.plans, [
      { id: 'pro', 'price-id': 'price_pro_m', features: [] },
      { id: 'pro-yearly', 'price-id': 'price_pro_y', features: [] },
    ]);
    assert.equal(body['checkout-enabled'], false);
  });
});
