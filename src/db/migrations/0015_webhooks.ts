import { sql, type Kysely } from 'kysely';

/**
 * Outgoing webhooks (docs/webhooks.md).
 * - `webhook_endpoint`: an organization's receiver. `events` lists the event types it takes, or
 *   `{*}`; the signing secret is sealed with ENCRYPTION_KEY (AES-256-GCM, the endpoint id as
 *   associated data); after a rotation the previous one signs too until
 *   `previous_secret_expires_at`. `failing_since` is the first failed attempt since the last
 *   success: the worker disables the endpoint when it is older than WEBHOOK_DISABLE_AFTER.
 * - `webhook_message`: one event, written in the transaction of the change that causes it, and
 *   only when a live endpoint of the organization takes its type (so an organization without
 *   endpoints writes nothing). `payload` is the exact body sent; `id` is the `webhook-id` header.
 * - `webhook_delivery`: a message for one endpoint; `pending` until an attempt succeeds
 *   (`succeeded`) or the retry schedule is spent (`failed`). The worker claims due deliveries with
 *   FOR UPDATE SKIP LOCKED and a lease (`locked_until`, `locked_by`), so each attempt is made by
 *   one instance. `seq` orders the log and is its cursor.
 * - `webhook_attempt`: one HTTP attempt of a delivery: status code, duration, error, the first
 *   4 KiB of the response.
 * Messages (and with them deliveries and attempts) are deleted 30 days after they were written.
 * Everything goes with the organization (cascades).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoint')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull().check(sql`url ~ '^https?://' and length(url) <= 2000`))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo('').check(sql`length(description) <= 500`))
    .addColumn('events', sql`text[]`, (c) => c.notNull().check(sql`cardinality(events) >= 1`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // why a disabled endpoint is off: `failing` when the worker turned it off; null when an admin did (or it is on)
    .addColumn('disabled_reason', 'text', (c) => c.check(sql`disabled_reason in ('failing')`))
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // the emitting statement's question on every change: does this organization have a live endpoint?
  await sql`create index webhook_endpoint_organization_idx on webhook_endpoint (organization_id) where enabled`.execute(db);
  await db.schema.createIndex('webhook_endpoint_list_idx').on('webhook_endpoint').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_message')
    .addColumn('id', 'text', (c) => c.primaryKey().defaultTo(sql`'msg_' || replace(gen_random_uuid()::text, '-', '')`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhook_message_created_idx').on('webhook_message').column('created_at').execute();
  await db.schema.createIndex('webhook_message_organization_idx').on('webhook_message').column('organization_id').execute();

  await db.schema
    .createTable('webhook_delivery')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity().unique())
    .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_message.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().references('webhook_endpoint.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    // the next attempt is one asked for by hand: when it fails, the delivery is failed (no more retries)
    .addColumn('manual', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('webhook_delivery_pending_is_due', sql`(status = 'pending') = (next_attempt_at is not null)`)
    .execute();
  // the worker's question: which pending deliveries are due
  await sql`create index webhook_delivery_due_idx on webhook_delivery (next_attempt_at) where status = 'pending'`.execute(db);
  // an endpoint's log, newest first
  await db.schema.createIndex('webhook_delivery_endpoint_idx').on('webhook_delivery').columns(['endpoint_id', 'seq']).execute();
  await db.schema.createIndex('webhook_delivery_message_idx').on('webhook_delivery').column('message_id').execute();

  await db.schema
    .createTable('webhook_attempt')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('delivery_id', 'uuid', (c) => c.notNull().references('webhook_delivery.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempt_delivery_idx').on('webhook_attempt').columns(['delivery_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempt').execute();
  await db.schema.dropTable('webhook_delivery').execute();
  await db.schema.dropTable('webhook_message').execute();
  await db.schema.dropTable('webhook_endpoint').execute();
}
