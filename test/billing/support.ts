/** Helpers for billing tests: Stripe events signed with the test webhook secret, delivered over HTTP. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { TestSystem } from '../support/system.js';
import { TEST_STRIPE_KEY } from './stripe-server.js';

export const WEBHOOK_SECRET = 'whsec_billing_0123456789';
const signer = new Stripe('sk_test_not_used');

/** A Stripe event envelope around `object`; `created` in Unix seconds (default now). */
export function stripeEvent(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return { id: `evt_${randomBytes(10).toString('hex')}`, object: 'event', type, created, livemode: false, data: { object } };
}

/** Delivers an event signed as Stripe signs it; asserts the 200. */
export async function deliver(t: TestSystem, event: Record<string, unknown>): Promise<void> {
  const payload = JSON.stringify(event);
  const res = await t.client('POST', '/api/webhooks/stripe', {
    headers: { 'content-type': 'application/json', 'stripe-signature': signer.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
    body: payload,
  });
  assert.equal(res.status, 200, `${String(event.type)}: ${res.text}`);
}

/** A subscription object as Stripe sends it in `customer.subscription.*` events (API versions since 2025: the period on the item). */
export function subscription(fields: {
  id: string;
  customer: string;
  status: string;
  price: string;
  periodEnd: number;
  cancelAtPeriodEnd?: boolean;
  trialEnd?: number | null;
}): Record<string, unknown> {
  return {
    id: fields.id,
    object: 'subscription',
    customer: fields.customer,
    status: fields.status,
    cancel_at_period_end: fields.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    trial_end: fields.trialEnd ?? null,
    items: {
      object: 'list',
      data: [{ id: `si_${fields.id}`, object: 'subscription_item', price: { id: fields.price, object: 'price' }, current_period_end: fields.periodEnd }],
    },
  };
}

/** The environment of a system with billing on, against the fake Stripe at `stripeUrl`. */
export function billingEnv(stripeUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: TEST_STRIPE_KEY,
    STRIPE_API_URL: stripeUrl,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    BILLING_PLANS: 'pro=price_pro_2024|price_pro_2023,team=price_team_2024',
    BILLING_TRIAL_DAYS: '14',
    LOGIN_LIMIT_EMAIL: '0',
    LOGIN_LIMIT_ADDRESS: '0',
    ...extra,
  };
}

/** The audit entries of an organization, oldest first. */
export async function auditEntries(t: TestSystem, organizationId: string) {
  return t.system.database.db
    .selectFrom('audit_entry')
    .select(['action', 'actor_account_id', 'actor_api_key_id', 'account_id', 'target_type', 'target_id', 'details', 'ip'])
    .where('organization_id', '=', organizationId)
    .orderBy('id')
    .execute();
}
