import { sql, type Kysely } from 'kysely';

/**
 * Notifications (docs/notifications.md):
 * - `notification`: one account's, written in the transaction of its cause; `seq` is the stream's
 *   cursor (`Last-Event-ID`); `in_app` false when the account turned the category's in-app channel
 *   off (kept for the digest, never listed); `digest` while it waits for the daily digest email.
 *   A trigger notifies `notification` (the account and the cursor) so every instance's streams
 *   wake; the table is the truth.
 * - `notification_preference`: an account's choice per category (null: the default);
 *   `organization_notification_default`: an organization's admins' defaults for its members.
 * - `notification_digest_run`: the day's digest ran (once across instances).
 * - `notification_stream`: the open streams, leased, so the per-account cap holds across instances.
 * - `mail_outbox.headers`: headers of a message (List-Unsubscribe, RFC 8058).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notification')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.references('organization.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('in_app', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('digest', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('read_at', 'timestamptz')
    .execute();
  await sql`create index notification_account_idx on notification (account_id, seq desc)`.execute(db);
  await sql`create index notification_unread_idx on notification (account_id) where read_at is null and in_app`.execute(db);
  await sql`create index notification_digest_idx on notification (account_id) where digest`.execute(db);
  await sql`create function notification_written() returns trigger language plpgsql as $$
    begin
      perform pg_notify('notification', new.account_id::text || ':' || new.seq::text);
      return new;
    end $$`.execute(db);
  await sql`create trigger notification_written after insert on notification for each row execute function notification_written()`.execute(db);
  await db.schema
    .createTable('notification_preference')
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('in_app', 'boolean')
    .addColumn('email', 'text', (c) => c.check(sql`email in ('immediately', 'daily', 'off')`))
    .addPrimaryKeyConstraint('notification_preference_pkey', ['account_id', 'category'])
    .execute();
  await db.schema
    .createTable('organization_notification_default')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('in_app', 'boolean')
    .addColumn('email', 'text', (c) => c.check(sql`email in ('immediately', 'daily', 'off')`))
    .addPrimaryKeyConstraint('organization_notification_default_pkey', ['organization_id', 'category'])
    .execute();
  await db.schema
    .createTable('notification_digest_run')
    .addColumn('day', 'date', (c) => c.primaryKey())
    .addColumn('ran_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('notification_stream')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index notification_stream_account_idx on notification_stream (account_id)`.execute(db);
  await db.schema.alterTable('mail_outbox').addColumn('headers', 'jsonb').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mail_outbox').dropColumn('headers').execute();
  await db.schema.dropTable('notification_stream').execute();
  await db.schema.dropTable('notification_digest_run').execute();
  await db.schema.dropTable('organization_notification_default').execute();
  await db.schema.dropTable('notification_preference').execute();
  await sql`drop trigger notification_written on notification`.execute(db);
  await sql`drop function notification_written()`.execute(db);
  await db.schema.dropTable('notification').execute();
}
