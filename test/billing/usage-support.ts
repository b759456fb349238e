/** The catalogue, environment and subscription the seats and usage tests share. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestSystem } from '../support/system.js';
import { billingEnv, deliver, stripeEvent } from './support.js';

export const CATALOGUE = {
  meters: { 'api-calls': { name: 'API calls', 'event-name': 'api_calls' } },
  plans: [
    { id: 'free', name: 'Free', default: true, seats: { included: 2, max: 3 }, limits: { 'api-calls': { soft: 3, hard: 5 } }, features: [] },
    {
      id: 'team',
      name: 'Team',
      prices: { flat: 'price_team_flat', 'per-seat': 'price_team_seat', metered: { 'api-calls': 'price_team_calls' } },
      seats: { included: 5, max: 50 },
      limits: { 'api-calls': { soft: 80000, hard: 100000 } },
      features: ['usage-report'],
    },
  ],
};

export function catalogueFile(catalogue: unknown = CATALOGUE): string {
  const path = join(mkdtempSync(join(tmpdir(), 'plans-')), 'plans.json');
  writeFileSync(path, JSON.stringify(catalogue));
  return path;
}

export function usageEnv(stripeUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const { BILLING_PLANS: _plans, ...env } = billingEnv(stripeUrl);
  return { ...env, BILLING_PLANS_FILE: catalogueFile(), BILLING_RETRY_SCHEDULE: '0.1,0.2', BILLING_SYNC_POLL_MS: '50', ...extra };
}

/** Subscribes the organization to `team` through the webhook: active, with one item per price and the seat item at `seats`. */
export async function subscribeTeam(t: TestSystem, orgId: string, seats: number): Promise<{ customer: string; items: Record<string, string> }> {
  const suffix = orgId.slice(0, 8);
  const customer = `cus_${suffix}`;
  const sub = `sub_${suffix}`;
  const items = { flat: `si_flat_${suffix}`, seat: `si_seat_${suffix}`, calls: `si_calls_${suffix}` };
  await deliver(t, stripeEvent('checkout.session.completed', { object: 'checkout.session', client_reference_id: orgId, customer, subscription: sub }));
  const now = Math.floor(Date.now() / 1000);
  await deliver(
    t,
    stripeEvent('customer.subscription.created', {
      id: sub,
      object: 'subscription',
      customer,
      status: 'active',
      cancel_at_period_end: false,
      items: {
        object: 'list',
        data: [
          { id: items.flat, price: { id: 'price_team_flat' }, quantity: 1, current_period_start: now - 86400, current_period_end: now + 29 * 86400 },
          { id: items.seat, price: { id: 'price_team_seat' }, quantity: seats, current_period_start: now - 86400, current_period_end: now + 29 * 86400 },
          { id: items.calls, price: { id: 'price_team_calls' }, current_period_start: now - 86400, current_period_end: now + 29 * 86400 },
        ],
      },
    }),
  );
  return { customer, items };
}

/** Polls (every 20 ms, at most 15 s) until `check` holds. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 750; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}
