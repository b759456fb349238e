import { sql, type Kysely } from 'kysely';

/**
 * Sign-in completeness (docs/sign-in.md):
 * - `email_sign_in`: an emailed sign-in, one row per message: the link's token and the 6-digit
 *   code as SHA-256 hashes, for the address it was sent to (no account yet when a sign-up is
 *   allowed: the account is made when the address is proven), 15 minutes, single-use, and the
 *   wrong codes given for it (the fifth voids it).
 * - `account_device`: the browsers an account has signed in from (a long-lived device cookie's
 *   random id), so a sign-in from one not seen before is told by email.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_sign_in')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`create index email_sign_in_email_idx on email_sign_in (email, created_at) where used_at is null`.execute(db);

  await db.schema
    .createTable('account_device')
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('device_id', 'text', (c) => c.notNull().check(sql`length(device_id) <= 64`))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('account_device_pkey', ['account_id', 'device_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_device').execute();
  await db.schema.dropTable('email_sign_in').execute();
}
