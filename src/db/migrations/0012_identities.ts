import { sql, type Kysely } from 'kysely';

/**
 * Sign-in through OpenID Connect / OAuth 2 providers (docs/oidc.md):
 * - `account_identity`: an account's identity at a provider, keyed by (provider, subject) so a
 *   later sign-in finds the account by the provider's stable subject, never by email (an address
 *   can change at the provider, or be reassigned there). `email` is the provider's verified
 *   address (null when it gave none), updated when a later sign-in asserts another verified
 *   one; it is shown on the account page and decides nothing. Deleting the account deletes its identities.
 * - `account.password_hash` becomes optional: an account made by a provider sign-in has no
 *   password until its owner sets one through forgot-password (docs/oidc.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_identity')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider ~ '^[a-z][a-z0-9-]{0,31}$'`))
    .addColumn('subject', 'text', (c) => c.notNull().check(sql`length(subject) between 1 and 255`))
    .addColumn('email', 'text', (c) => c.check(sql`email = lower(email)`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addUniqueConstraint('account_identity_provider_subject_key', ['provider', 'subject'])
    .execute();
  // the account page and the "ways to sign in" check read by account
  await db.schema.createIndex('account_identity_account_idx').on('account_identity').column('account_id').execute();
  await db.schema
    .alterTable('account')
    .alterColumn('password_hash', (c) => c.dropNotNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_identity').execute();
  // accounts without a password cannot survive the old constraint: they go first
  await sql`delete from account where password_hash is null`.execute(db);
  await db.schema
    .alterTable('account')
    .alterColumn('password_hash', (c) => c.setNotNull())
    .execute();
}
