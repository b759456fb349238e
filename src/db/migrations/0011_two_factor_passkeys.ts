import { sql, type Kysely } from 'kysely';

/**
 * TOTP two-factor and passkeys (docs/sign-in.md):
 * - `account.two_factor_enabled`: whether log-in asks for a second factor (shown as the
 *   account's `two-factor-enabled`).
 * - `totp_credential`: one per account; the secret sealed with ENCRYPTION_KEY (AES-256-GCM, bound
 *   to the account), pending until `enabled_at`; `last_used_step` refuses a code used before.
 * - `backup_code`: ten single-use recovery codes per account, stored as keyed hashes.
 * - `mfa_login`: a log-in waiting for its second factor; the `mfa-token`'s hash, single-use,
 *   five minutes, a bounded number of wrong codes.
 * - `passkey`: WebAuthn credentials (public key, signature counter).
 * - `webauthn_challenge`: the challenges of registration and sign-in ceremonies, single-use,
 *   five minutes, in the database so any instance can finish what another started.
 * Everything goes with its account (`on delete cascade`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('account')
    .addColumn('two_factor_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();

  await db.schema
    .createTable('totp_credential')
    .addColumn('account_id', 'uuid', (c) => c.primaryKey().references('account.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('enabled_at', 'timestamptz')
    .addColumn('last_used_step', 'bigint')
    .execute();

  await db.schema
    .createTable('backup_code')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('used_at', 'timestamptz')
    .addUniqueConstraint('backup_code_account_hash_key', ['account_id', 'code_hash'])
    .execute();

  await db.schema
    .createTable('mfa_login')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('mfa_login_expires_idx').on('mfa_login').column('expires_at').execute();

  await db.schema
    .createTable('passkey')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    // base64url, as WebAuthn's JSON carries it; unique across accounts (one authenticator key, one account)
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    // the COSE public key, base64url
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('device_type', 'text', (c) => c.notNull())
    .addColumn('backed_up', 'boolean', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('passkey_account_idx').on('passkey').column('account_id').execute();

  await db.schema
    .createTable('webauthn_challenge')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('registration', 'authentication')`))
    // the registering account; null for a sign-in (discoverable credentials: nobody is named yet)
    .addColumn('account_id', 'uuid', (c) => c.references('account.id').onDelete('cascade'))
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthn_challenge_account_idx').on('webauthn_challenge').columns(['account_id', 'purpose']).execute();
  await db.schema.createIndex('webauthn_challenge_expires_idx').on('webauthn_challenge').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webauthn_challenge', 'passkey', 'mfa_login', 'backup_code', 'totp_credential']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('account').dropColumn('two_factor_enabled').execute();
}
