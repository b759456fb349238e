/**
 * Seats at checkout and at invitation (docs/billing.md, "Seats"): one line item
 * per price of the plan, and the seat cap. The quantity sync is stripe-sync.ts.
 */
import { phrase } from '../i18n/messages.js';
import type { DB } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import type { Catalogue } from './catalogue.js';
import { orgBilling, planOf, seatCount } from './org-plan.js';
import type { CheckoutSessionParams } from './stripe-gateway.js';

type LineItems = NonNullable<CheckoutSessionParams['line_items']>;

/**
 * One line item per price of the plan: `flat` quantity 1, `per-seat` the whole seat count
 * (Stripe prices what `included` covers, e.g. a graduated price free up to it), each `metered`
 * price without a quantity (Stripe refuses one).
 */
export async function checkoutLineItems(db: DB, catalogue: Catalogue, planId: string, priceId: string, organizationId: string): Promise<LineItems> {
  const prices = catalogue.plans.find((p) => p.id === planId)?.prices;
  if (!prices) return [{ price: priceId, quantity: 1 }];
  const items: LineItems = [];
  if (prices.flat) items.push({ price: prices.flat, quantity: 1 });
  if (prices.perSeat) items.push({ price: prices.perSeat, quantity: Math.max(1, await seatCount(db, organizationId)) });
  for (const metered of Object.values(prices.metered)) items.push({ price: metered });
  return items;
}

/**
 * The seat cap (an invitation check, asked in the invitation's transaction with the
 * organization's row locked): 402 `seat-limit` when one more seat would pass the plan's
 * `seats.max`. Directory sync is not refused: its members count, nothing more.
 */
export async function seatCap(trx: DB, catalogue: Catalogue, appUrl: string, organizationId: string): Promise<void> {
  const row = await orgBilling(trx, organizationId);
  const max = row && planOf(catalogue, row)?.seats.max;
  if (max === undefined || max === null) return;
  const used = await seatCount(trx, organizationId);
  if (used + 1 <= max) return;
  throw new HttpError(402, {
    type: 'seat-limit',
    message: phrase("The organization's plan has {max} seats and {used} are taken (members and pending invitations): upgrade to invite more", { max, used }),
    limit: max,
    used,
    'upgrade-url': `${appUrl}/billing?org=${organizationId}`,
  });
}
