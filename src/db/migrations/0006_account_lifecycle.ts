import { sql, type Kysely } from 'kysely';

/**
 * The account lifecycle (docs/api.md, "Account lifecycle"):
 * - `account.email_verified`: accounts that existed before are unverified (false): nobody has
 *   proved they own the address yet; they see the banner and can ask for a link.
 * - `action_token`: single-use emailed tokens (verification, password reset, email change),
 *   stored as SHA-256 hashes.
 * - session metadata on `refresh_family` (user agent, address, last use) for the sessions page.
 * - `refresh_family.account_id` becomes nullable, `on delete set null`: a deleted account's
 *   revoked families stay (unlinked, without metadata) until their access tokens have expired,
 *   because instances that start or poll learn of revocations from these rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('account')
    .addColumn('email_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();

  await db.schema
    .createTable('action_token')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('verify-email', 'reset-password', 'email-change', 'invitation')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    // the address the link was sent to: the account's for verify-email and reset-password, the new one for email-change
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('action_token_account_idx').on('action_token').columns(['account_id', 'purpose']).execute();

  await db.schema.alterTable('refresh_family').addColumn('user_agent', 'text').addColumn('ip', 'text').addColumn('last_used_at', 'timestamptz').execute();
  await sql`update refresh_family set last_used_at = created_at`.execute(db);
  await sql`alter table refresh_family alter column account_id drop not null`.execute(db);
  await sql`alter table refresh_family drop constraint refresh_family_account_id_fkey`.execute(db);
  await sql`alter table refresh_family add constraint refresh_family_account_id_fkey
    foreign key (account_id) references account(id) on delete set null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from refresh_family where account_id is null`.execute(db);
  await sql`alter table refresh_family drop constraint refresh_family_account_id_fkey`.execute(db);
  await sql`alter table refresh_family add constraint refresh_family_account_id_fkey
    foreign key (account_id) references account(id) on delete cascade`.execute(db);
  await sql`alter table refresh_family alter column account_id set not null`.execute(db);
  await db.schema.alterTable('refresh_family').dropColumn('user_agent').dropColumn('ip').dropColumn('last_used_at').execute();
  await db.schema.dropTable('action_token').execute();
  await db.schema.alterTable('account').dropColumn('email_verified').execute();
}
