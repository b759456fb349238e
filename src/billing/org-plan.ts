/**
 * An organization's plan, billing period and seat count (docs/billing.md, "The catalogue" and
 * "Seats"): the catalogue plan one of whose prices is an item of its trialing or active
 * subscription, else the default plan, else none; the subscription's current period while it
 * has one, else the UTC calendar month (`end` exclusive); members not suspended plus pending
 * invitations.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { SubscriptionItem, SubscriptionStatus } from '../db/schema.js';
import { type Catalogue, type CataloguePlan, pricesOf } from './catalogue.js';

/** What the plan and period are read from: the organization's billing columns. */
export interface OrgBillingRow {
  id: string;
  subscription_status: SubscriptionStatus;
  subscription_plan: string | null;
  subscription_items: SubscriptionItem[] | string;
  subscription_period_start: Date | null;
  subscription_period_end: Date | null;
  billing_customer_id: string | null;
  billing_subscription_id: string | null;
  seat_quantity_sent: number | null;
}

export const ORG_BILLING_COLUMNS = [
  'id',
  'subscription_status',
  'subscription_plan',
  'subscription_items',
  'subscription_period_start',
  'subscription_period_end',
  'billing_customer_id',
  'billing_subscription_id',
  'seat_quantity_sent',
] as const;

export interface Period {
  start: Date;
  /** exclusive: the next period's start */
  end: Date;
}

const PAID: ReadonlySet<SubscriptionStatus> = new Set(['trialing', 'active']);
/** a subscription in these has a quantity to keep in sync */
export const SYNCED: ReadonlySet<SubscriptionStatus> = new Set(['trialing', 'active', 'past-due']);

export function itemsOf(row: Pick<OrgBillingRow, 'subscription_items'>): SubscriptionItem[] {
  const items = typeof row.subscription_items === 'string' ? (JSON.parse(row.subscription_items) as unknown) : row.subscription_items;
  return Array.isArray(items) ? (items as SubscriptionItem[]) : [];
}

/** The organization's plan in the catalogue, or undefined (no cap, no limits, no features). */
export function planOf(
  catalogue: Catalogue,
  row: Pick<OrgBillingRow, 'subscription_status' | 'subscription_plan' | 'subscription_items'>,
): CataloguePlan | undefined {
  if (PAID.has(row.subscription_status)) {
    const prices = new Set(itemsOf(row).map((i) => i.price));
    const paid =
      catalogue.plans.find((p) => pricesOf(p).some((price) => prices.has(price))) ??
      catalogue.plans.find((p) => p.prices && (p.id === row.subscription_plan || pricesOf(p).includes(row.subscription_plan ?? '')));
    if (paid) return paid;
  }
  return catalogue.plans.find((p) => p.default);
}

/** The current billing period at `now`. */
export function periodOf(row: Pick<OrgBillingRow, 'subscription_status' | 'subscription_period_start' | 'subscription_period_end'>, now: Date): Period {
  const start = row.subscription_period_start && new Date(row.subscription_period_start);
  const end = row.subscription_period_end && new Date(row.subscription_period_end);
  if (SYNCED.has(row.subscription_status) && start && end && start.getTime() <= now.getTime() && now.getTime() < end.getTime()) return { start, end };
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** Members (suspended ones excluded) plus pending invitations: one statement. */
export async function seatCount(db: DB, organizationId: string): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select (select count(*) from membership where organization_id = ${organizationId} and suspended_at is null)
      + (select count(*) from invitation where organization_id = ${organizationId}
           and accepted_at is null and revoked_at is null and expires_at > now()) as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export async function orgBilling(db: DB, organizationId: string): Promise<OrgBillingRow | undefined> {
  return db.selectFrom('organization').select(ORG_BILLING_COLUMNS).where('id', '=', organizationId).executeTakeFirst();
}
