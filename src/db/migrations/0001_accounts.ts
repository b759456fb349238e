import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('payment_customer_id', 'text', (c) => c.unique())
    .addColumn('subscription_status', 'text', (c) =>
      c.notNull().defaultTo('none').check(sql`subscription_status in ('none','trialing','active','past-due','canceled')`),
    )
    .addColumn('subscription_plan', 'text')
    .addColumn('subscription_period_end', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account').execute();
}
