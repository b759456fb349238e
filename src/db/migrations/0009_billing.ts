import { sql, type Kysely } from 'kysely';

/**
 * Billing belongs to organizations (docs/billing.md):
 * - the organization keeps its Stripe customer (`billing_customer_id`, unique: one customer pays
 *   for one organization), its current subscription (`billing_subscription_id`) and whether that
 *   subscription ends at the close of the period (`subscription_cancel_at_period_end`);
 * - until now the account held the customer and the subscription (organizations got a copy in
 *   0007, which the webhook no longer updated): both move to the personal organization here, and
 *   `account.payment_customer_id` goes;
 * - `account.subscription_*` stay, as a copy of the personal organization's that a trigger keeps
 *   (nothing else writes them): `user-account.subscription` is the personal organization's, and the
 *   account queries (GET /me, log-in, ...) keep reading one row;
 * - payment events name their organization (`organization_id`) and, for subscription and invoice
 *   events, their subscription (`subscription_id`: out-of-order events are judged per subscription).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('organization')
    .addColumn('billing_customer_id', 'text', (c) => c.unique())
    .addColumn('billing_subscription_id', 'text')
    .addColumn('subscription_cancel_at_period_end', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`update organization o
    set billing_customer_id = a.payment_customer_id, subscription_status = a.subscription_status,
        subscription_plan = a.subscription_plan, subscription_period_end = a.subscription_period_end
    from account a where o.personal_account_id = a.id`.execute(db);
  await db.schema.alterTable('account').dropColumn('payment_customer_id').execute();

  await db.schema
    .alterTable('payment_event')
    .addColumn('organization_id', 'uuid', (c) => c.references('organization.id').onDelete('set null'))
    .addColumn('subscription_id', 'text')
    .execute();
  await sql`update payment_event e set organization_id = o.id from organization o where o.personal_account_id = e.account_id`.execute(db);
  await sql`update payment_event set subscription_id = case
      when type like 'customer.subscription.%' then payload #>> '{data,object,id}'
      when jsonb_typeof(payload #> '{data,object,subscription}') = 'string' then payload #>> '{data,object,subscription}'
    end
    where provider = 'stripe' and (type like 'customer.subscription.%' or type like 'invoice.%')`.execute(db);
  await db.schema.createIndex('payment_event_subscription_idx').on('payment_event').columns(['provider', 'subscription_id', 'created_at']).execute();
  await db.schema.createIndex('payment_event_organization_idx').on('payment_event').columns(['organization_id', 'seq']).execute();

  await sql`create function organization_subscription_to_account() returns trigger language plpgsql as $$
    begin
      update account set subscription_status = new.subscription_status, subscription_plan = new.subscription_plan,
        subscription_period_end = new.subscription_period_end
      where id = new.personal_account_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger organization_subscription_to_account
    after update of subscription_status, subscription_plan, subscription_period_end on organization
    for each row when (new.personal_account_id is not null and
      (old.subscription_status, old.subscription_plan, old.subscription_period_end)
        is distinct from (new.subscription_status, new.subscription_plan, new.subscription_period_end))
    execute function organization_subscription_to_account()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger organization_subscription_to_account on organization`.execute(db);
  await sql`drop function organization_subscription_to_account()`.execute(db);
  await db.schema.dropIndex('payment_event_organization_idx').execute();
  await db.schema.dropIndex('payment_event_subscription_idx').execute();
  await db.schema.alterTable('payment_event').dropColumn('subscription_id').dropColumn('organization_id').execute();
  await db.schema
    .alterTable('account')
    .addColumn('payment_customer_id', 'text', (c) => c.unique())
    .execute();
  await sql`update account a set payment_customer_id = o.billing_customer_id from organization o where o.personal_account_id = a.id`.execute(db);
  await db.schema
    .alterTable('organization')
    .dropColumn('subscription_cancel_at_period_end')
    .dropColumn('billing_subscription_id')
    .dropColumn('billing_customer_id')
    .execute();
}
