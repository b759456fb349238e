import { sql, type Kysely } from 'kysely';

/**
 * Subscription events that Stripe's order cannot settle (docs/billing.md, "What the webhook does"):
 * - `payment_event.final`: the event ends its subscription for good (Stripe's `canceled` or
 *   `incomplete_expired`, or `customer.subscription.deleted`); no later event of that
 *   subscription id moves it out. Stored events are marked from their payloads.
 * - `billing_job` kind `subscription` (with `subscription_id`): events of one subscription that
 *   share a `created` second are settled by what Stripe says now; the sync re-reads the
 *   subscription through the Stripe client and applies it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('payment_event')
    .addColumn('final', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`
    update payment_event set final = true
    where provider = 'stripe' and type like 'customer.subscription.%'
      and (type = 'customer.subscription.deleted' or payload #>> '{data,object,status}' in ('canceled', 'incomplete_expired'))`.execute(db);
  await sql`alter table billing_job drop constraint billing_job_kind_check`.execute(db);
  await sql`alter table billing_job add constraint billing_job_kind_check check (kind in ('seats', 'meter', 'subscription'))`.execute(db);
  await db.schema.alterTable('billing_job').addColumn('subscription_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from billing_job where kind = 'subscription'`.execute(db);
  await db.schema.alterTable('billing_job').dropColumn('subscription_id').execute();
  await sql`alter table billing_job drop constraint billing_job_kind_check`.execute(db);
  await sql`alter table billing_job add constraint billing_job_kind_check check (kind in ('seats', 'meter'))`.execute(db);
  await db.schema.alterTable('payment_event').dropColumn('final').execute();
}
