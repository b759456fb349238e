/**
 * Where the Stripe sync's seat and meter jobs go (stripe-sync.ts): the subscription item of the
 * plan's per-seat price, the customer and event name of a meter, and the seat jobs an
 * invitation's expiry calls for (it changes a count without a write).
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import { type Catalogue, pricesOf } from './catalogue.js';
import { itemsOf, type OrgBillingRow, orgBilling, SYNCED, seatCount } from './org-plan.js';

/** The subscription item of the plan's per-seat price, while the subscription is synced. */
export function perSeatItem(catalogue: Catalogue, row: OrgBillingRow) {
  if (!SYNCED.has(row.subscription_status) || !row.billing_subscription_id) return undefined;
  const items = itemsOf(row);
  const prices = new Set(items.map((i) => i.price));
  const plan = catalogue.plans.find((p) => pricesOf(p).some((price) => prices.has(price)));
  const perSeat = plan?.prices?.perSeat;
  return perSeat ? items.find((i) => i.price === perSeat) : undefined;
}

/** The seat call to make now: undefined when there is no per-seat item or the count is what Stripe has. */
export async function seatCall(trx: DB, catalogue: Catalogue, organizationId: string, key: string) {
  const row = await orgBilling(trx, organizationId);
  const item = row && perSeatItem(catalogue, row);
  if (!row || !item) return undefined;
  const quantity = await seatCount(trx, organizationId);
  // what Stripe has: the sync's last call, else what the subscription events report
  if (quantity === (row.seat_quantity_sent ?? item.quantity)) return undefined;
  return { kind: 'seats' as const, itemId: item.id, quantity, key };
}

/** The customer and event name of a meter job, when the organization's plan has a metered price for it. */
export async function meterTarget(
  db: DB,
  catalogue: Catalogue,
  organizationId: string,
  meterId: string | null,
): Promise<{ eventName: string; customerId: string } | undefined> {
  const row = await orgBilling(db, organizationId);
  const meter = catalogue.meters.find((m) => m.id === meterId);
  if (!row?.billing_customer_id || !meter || !SYNCED.has(row.subscription_status)) return undefined;
  const prices = new Set(itemsOf(row).map((i) => i.price));
  const plan = catalogue.plans.find((p) => pricesOf(p).some((price) => prices.has(price)));
  if (!plan?.prices?.metered[meter.id]) return undefined;
  return { eventName: meter.eventName, customerId: row.billing_customer_id };
}

/**
 * A `seats` job for each organization with a running subscription whose invitations expired in
 * the last two hours (the hourly pass; a job that finds the count unchanged sends nothing).
 */
export async function queueExpiredInvitationSeats(db: DB): Promise<void> {
  await sql`
    insert into billing_job (organization_id, kind)
    select distinct i.organization_id, 'seats' from invitation i join organization o on o.id = i.organization_id
    where i.accepted_at is null and i.revoked_at is null and i.expires_at <= now() and i.expires_at > now() - interval '2 hours'
      and o.billing_subscription_id is not null and o.subscription_status in ('trialing', 'active', 'past-due')
      and not exists (select 1 from billing_job j where j.organization_id = i.organization_id and j.kind = 'seats' and j.status = 'pending' and j.attempts = 0)`.execute(
    db,
  );
}
