import { sql, type Kysely } from 'kysely';

/**
 * The mail outbox: every message is a row written in the same transaction as the change that
 * causes it; the worker (src/mail/worker.ts) claims due rows with FOR UPDATE SKIP LOCKED.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    // null once delivered over SMTP: the bodies carry live tokens and are not kept longer than needed
    .addColumn('html_body', 'text')
    .addColumn('text_body', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending','sending','sent','failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .execute();
  // the worker's two questions: which pending messages are due, which leases have run out
  await sql`create index mail_outbox_due_idx on mail_outbox (next_attempt_at) where status = 'pending'`.execute(db);
  await sql`create index mail_outbox_lease_idx on mail_outbox (locked_until) where status = 'sending'`.execute(db);
  await db.schema.createIndex('mail_outbox_created_idx').on('mail_outbox').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
