/** Billing configuration: each bad value stops start-up with a message naming the variable, never repeating the secret key. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { billingModule } from '../../src/billing/module.js';
import { settingsOf } from '../support/settings.js';
import { checkoutIdempotencyKey, CHECKOUT_IDEMPOTENCY_WINDOW_MS } from '../../src/billing/checkout-key.js';
import { BillingService } from '../../src/billing/service.js';
import { billingSettings, planOfPrice } from '../../src/billing/settings.js';
import type { DB } from '../../src/db/database.js';
import { HttpError } from '../../src/http/errors.js';
import type { Logger } from '../../src/logging/logger.js';

const load = (env: Record<string, string>) => settingsOf(billingModule, { APP_ENV: 'test', ...env });

function refuses(env: Record<string, string>, variable: string, pattern: RegExp): ConfigError {
  let caught: unknown;
  try {
    load(env);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConfigError, `${JSON.stringify(env)} is refused`);
  assert.equal(caught.variable, variable);
  assert.match(caught.message, pattern);
  return caught;
}

describe('billing settings', () => {
  it("defaults to no key, Stripe's API, no plans and no trial", () => {
    const { billing } = load({});
    const { catalogue, ...rest } = billing;
    assert.deepEqual(
      { ...rest, apiUrl: billing.apiUrl.href },
      {
        secretKey: undefined,
        apiUrl: 'https://api.stripe.com/',
        plans: [],
        trialDays: 0,
        proration: 'create_prorations',
        retryScheduleMs: [5000, 30_000, 120_000, 600_000, 3_600_000],
      },
    );
    assert.deepEqual(catalogue.plans, []);
  });

  it('reads plans with their current and former prices', () => {
    const { billing } = load({
      BILLING_PLANS: ' pro=price_new|price_old , team=price_team ',
      BILLING_TRIAL_DAYS: '30',
      STRIPE_API_URL: 'http://127.0.0.1:12111',
    });
    assert.deepEqual(billing.plans, [
      { id: 'pro', priceId: 'price_new', formerPriceIds: ['price_old'] },
      { id: 'team', priceId: 'price_team', formerPriceIds: [] },
    ]);
    assert.equal(planOfPrice(billing.plans, 'price_old')?.id, 'pro');
    assert.equal(planOfPrice(billing.plans, 'price_other'), undefined);
    assert.equal(billing.trialDays, 30);
    assert.equal(billing.apiUrl.port, '12111');
  });

  it('refuses malformed plans, duplicates, bad trials and API URLs, naming the variable', () => {
    refuses({ BILLING_PLANS: 'pro' }, 'BILLING_PLANS', /plan=price_id pairs/);
    refuses({ BILLING_PLANS: 'Pro=price_1' }, 'BILLING_PLANS', /lower-case/);
    refuses({ BILLING_PLANS: 'pro=price 1' }, 'BILLING_PLANS', /not a Stripe price id/);
    refuses({ BILLING_PLANS: 'pro=price_1,pro=price_2' }, 'BILLING_PLANS', /"pro" is named twice/);
    refuses({ BILLING_PLANS: 'pro=price_1,team=price_1' }, 'BILLING_PLANS', /"price_1" is named twice/);
    refuses({ BILLING_TRIAL_DAYS: '-1' }, 'BILLING_TRIAL_DAYS', /0 to 730/);
    refuses({ BILLING_TRIAL_DAYS: '731' }, 'BILLING_TRIAL_DAYS', /0 to 730/);
    refuses({ STRIPE_API_URL: 'ftp://api.stripe.com' }, 'STRIPE_API_URL', /https URL/);
    refuses({ STRIPE_API_URL: 'https://api.stripe.com/v1' }, 'STRIPE_API_URL', /origin only/);
    // the key would cross the network in clear
    refuses({ STRIPE_API_URL: 'http://stripe.example.com' }, 'STRIPE_API_URL', /plain http only for a server on this machine/);
  });

  it('refuses a value that is no Stripe secret key without repeating it', () => {
    const leaked = 'pk_live_0123456789abcdef';
    const err = refuses({ STRIPE_SECRET_KEY: leaked }, 'STRIPE_SECRET_KEY', /secret or restricted key/);
    assert.ok(!err.message.includes(leaked));
    assert.equal(load({ STRIPE_SECRET_KEY: 'rk_test_0123456789abcdef' }).billing.secretKey, 'rk_test_0123456789abcdef');
  });
});

describe('checkout idempotency key', () => {
  const params = { mode: 'subscription' as const, line_items: [{ price: 'price_pro', quantity: 1 }], client_reference_id: 'org-1' };
  const at = new Date(Math.floor(Date.UTC(2030, 0, 1) / CHECKOUT_IDEMPOTENCY_WINDOW_MS) * CHECKOUT_IDEMPOTENCY_WINDOW_MS);
  const later = (ms: number) => new Date(at.getTime() + ms);

  it('is the same for the same caller and parameters within a window, and new for any change or a later window', () => {
    const key = checkoutIdempotencyKey('acct-1', params, at);
    assert.equal(checkoutIdempotencyKey('acct-1', params, later(CHECKOUT_IDEMPOTENCY_WINDOW_MS - 1)), key);
    assert.notEqual(checkoutIdempotencyKey('acct-1', params, later(CHECKOUT_IDEMPOTENCY_WINDOW_MS)), key);
    assert.notEqual(checkoutIdempotencyKey('acct-2', params, at), key);
    assert.notEqual(checkoutIdempotencyKey('acct-1', { ...params, line_items: [{ price: 'price_team', quantity: 1 }] }, at), key);
    assert.notEqual(checkoutIdempotencyKey('acct-1', { ...params, customer: 'cus_1' }, at), key);
    assert.ok(key.length <= 255, 'Stripe takes keys up to 255 characters');
  });
});

describe('billing without STRIPE_SECRET_KEY', () => {
  const settings = billingSettings({ BILLING_PLANS: 'pro=price_pro' }, (variable, problem) => new ConfigError(variable, problem));
  // nothing may reach the database or Stripe: both are absent
  const billing = new BillingService({
    db: undefined as unknown as DB,
    settings,
    appUrl: 'https://app.example.com',
    gateway: undefined,
    log: undefined as unknown as Logger,
  });
  const membership = {
    organizationId: '00000000-0000-4000-8000-000000000001',
    accountId: '00000000-0000-4000-8000-000000000002',
    role: 'owner' as const,
    joinedAt: new Date(),
  };
  const user = { id: membership.accountId, email: 'a@example.com', sessionId: 's' };
  const origin = { ip: null, userAgent: null };

  it('still lists the plans, and answers checkout and portal with 503 billing-not-configured', async () => {
    assert.deepEqual(await billing.plans(), { plans: [{ id: 'pro', 'price-id': 'price_pro', features: [] }], 'trial-days': 0, 'checkout-enabled': false });
    for (const attempt of [() => billing.checkout(membership, user, 'pro', origin), () => billing.portal(membership, user, origin)]) {
      await assert.rejects(attempt, (err: unknown) => {
        assert.ok(err instanceof HttpError);
        assert.equal(err.status, 503);
        assert.equal(err.body.type, 'billing-not-configured');
        assert.match(err.body.message, /STRIPE_SECRET_KEY/);
        return true;
      });
    }
  });
});
