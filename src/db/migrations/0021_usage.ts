import { sql, type Kysely } from 'kysely';

/**
 * Seats, usage and plan limits (docs/billing.md).
 * - `organization`: the subscription's items as the subscription events report them
 *   (`[{id, price, quantity}]`), its current period's start, and the seat quantity Stripe was
 *   last given by the sync.
 * - `usage_record`: what a service recorded (`usage.record`), once per organization, meter and
 *   id; `job_id` is the Stripe sync job that took it to Stripe (null: not yet, or never).
 * - `usage_counter`: an organization's usage of a meter in one billing period (its start names
 *   it). Every recording updates it, so concurrent recordings are serialized on its row: the one
 *   that crosses the soft limit is the only one that sees itself cross it (`soft_notified`).
 * - `billing_job`: the Stripe sync outbox (seat quantities, meter events): one organization's jobs
 *   are sent in `id` order, one at a time across instances, retried on BILLING_RETRY_SCHEDULE,
 *   never given up. `idempotency_key` is fixed when the job is first claimed, with `quantity`
 *   (seats) or `value` (meter events), so every attempt sends the same request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('organization')
    .addColumn('subscription_items', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('subscription_period_start', 'timestamptz')
    .addColumn('seat_quantity_sent', 'integer')
    .execute();

  await db.schema
    .createTable('billing_job')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('seats', 'meter')`))
    .addColumn('meter', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'sent', 'skipped')`))
    .addColumn('idempotency_key', 'text')
    .addColumn('quantity', 'integer')
    .addColumn('value', 'bigint')
    .addColumn('event_at', 'timestamptz')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .execute();
  // the worker's question: each organization's oldest pending job
  await sql`create index billing_job_pending_idx on billing_job (organization_id, id) where status = 'pending'`.execute(db);

  // every change of a seat count (a membership added, removed, suspended or back; an invitation
  // created, accepted, revoked) of an organization with a running subscription writes a `seats`
  // job, unless one not yet claimed waits (it will send the count of its sending time)
  await sql`
    create function billing_seats_changed() returns trigger language plpgsql as $$
    declare
      org uuid;
    begin
      if tg_op = 'DELETE' then org := old.organization_id; else org := new.organization_id; end if;
      -- a job not yet claimed will count this change when it is sent; locked, so a claim that takes it
      -- now waits for this commit (and a claim already made is seen: it no longer matches, a new job is written)
      perform 1 from billing_job j
      where j.organization_id = org and j.kind = 'seats' and j.status = 'pending' and j.attempts = 0 for update;
      if found then return null; end if;
      insert into billing_job (organization_id, kind)
      select o.id, 'seats' from organization o
      where o.id = org and o.billing_subscription_id is not null and o.subscription_status in ('trialing', 'active', 'past-due');
      if found then perform pg_notify('billing_due', ''); end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger membership_seats after insert or delete or update of suspended_at on membership
    for each row execute function billing_seats_changed()`.execute(db);
  await sql`create trigger invitation_seats after insert or delete or update of accepted_at, revoked_at on invitation
    for each row execute function billing_seats_changed()`.execute(db);

  await db.schema
    .createTable('usage_record')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('meter', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull().check(sql`length(id) between 1 and 200`))
    .addColumn('quantity', 'bigint', (c) => c.notNull().check(sql`quantity > 0`))
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // no foreign key: a purged job must not make its records look unsent
    .addColumn('job_id', 'bigint')
    .addPrimaryKeyConstraint('usage_record_pk', ['organization_id', 'meter', 'id'])
    .execute();
  await db.schema.createIndex('usage_record_time_idx').on('usage_record').columns(['organization_id', 'meter', 'recorded_at']).execute();

  await db.schema
    .createTable('usage_counter')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('meter', 'text', (c) => c.notNull())
    .addColumn('period_start', 'timestamptz', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('soft_notified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('usage_counter_pk', ['organization_id', 'meter', 'period_start'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger invitation_seats on invitation`.execute(db);
  await sql`drop trigger membership_seats on membership`.execute(db);
  await sql`drop function billing_seats_changed()`.execute(db);
  await db.schema.dropTable('usage_counter').execute();
  await db.schema.dropTable('usage_record').execute();
  await db.schema.dropTable('billing_job').execute();
  await db.schema
    .alterTable('organization')
    .dropColumn('subscription_items')
    .dropColumn('subscription_period_start')
    .dropColumn('seat_quantity_sent')
    .execute();
}
