import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payment_event')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('customer_id', 'text')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addPrimaryKeyConstraint('payment_event_pk', ['provider', 'event_id'])
    .execute();
  await db.schema.createIndex('payment_event_account_idx').on('payment_event').columns(['account_id', 'seq']).execute();
  await db.schema.createIndex('payment_event_customer_idx').on('payment_event').columns(['provider', 'customer_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payment_event').execute();
}
