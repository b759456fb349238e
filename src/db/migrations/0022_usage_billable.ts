import { sql, type Kysely } from 'kysely';

/**
 * Whether a usage record is billed is decided when it is recorded (docs/billing.md, "When Stripe
 * is down"): `usage_record.billable` is true only for a recording made while the organization had
 * a Stripe customer and a plan with a metered price for the meter. Only billable records go to
 * Stripe, so usage of a free plan (or after a cancellation) is never sent with the first paid
 * event. Records not yet sent are billable when they were recorded within the running
 * subscription's current period (what the first paid event would rightly send); older unsent
 * ones are not.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('usage_record')
    .addColumn('billable', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`
    update usage_record r set billable = true
    from organization o
    where o.id = r.organization_id and (r.job_id is not null or (
      o.billing_customer_id is not null and o.subscription_status in ('trialing', 'active')
      and o.subscription_period_start is not null and r.recorded_at >= o.subscription_period_start))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_record').dropColumn('billable').execute();
}
