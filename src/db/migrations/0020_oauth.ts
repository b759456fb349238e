import { sql, type Kysely } from 'kysely';

/**
 * Signing keys and the OAuth 2.1 / OpenID Connect provider (docs/oauth.md).
 * - `signing_key`: the server's asymmetric keys (EdDSA for access tokens, RS256 and ES256 for ID
 *   tokens). The private JWK is sealed with ENCRYPTION_KEY (AES-256-GCM, the kid as associated
 *   data); `active_from` is when it starts signing (a rotation publishes first, signs later).
 * - `oauth_app`: an organization's registered client. Only the SHA-256 of a confidential app's
 *   secret is kept. Dynamically registered clients (no organization) live in `oauth_model`.
 * - `oauth_model`: what oidc-provider stores (its adapter contract): sessions, interactions,
 *   authorization codes, refresh tokens, grants, registered clients, by model and id, with the
 *   grant and uid they belong to, until `expires_at`.
 * - `oauth_grant`: a person's consent to an app (one per account and client): the connected
 *   app they see and revoke. `revoked_at` feeds the set of ended sessions every instance keeps
 *   (its id is the access tokens' `sid`), as `refresh_family.revoked_at` does.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_key')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull().check(sql`alg in ('EdDSA', 'RS256', 'ES256')`))
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('private_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('active_from', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signing_key_alg_idx').on('signing_key').columns(['alg', 'active_from']).execute();

  await db.schema
    .createTable('oauth_app')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull().check(sql`cardinality(redirect_uris) between 1 and 10`))
    .addColumn('confidential', 'boolean', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('oauth_app_secret_check', sql`confidential = (secret_hash is not null)`)
    .execute();
  await db.schema.createIndex('oauth_app_organization_idx').on('oauth_app').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('oauth_model')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('consumed_at', 'timestamptz')
    .addPrimaryKeyConstraint('oauth_model_pkey', ['model', 'id'])
    .execute();
  await sql`create index oauth_model_grant_idx on oauth_model (grant_id) where grant_id is not null`.execute(db);
  await sql`create index oauth_model_uid_idx on oauth_model (uid) where uid is not null`.execute(db);
  await sql`create index oauth_model_expires_idx on oauth_model (expires_at) where expires_at is not null`.execute(db);

  await db.schema
    .createTable('oauth_grant')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text', (c) => c.check(sql`revoked_reason in ('account', 'app-deleted', 'refresh-token-reuse', 'expired')`))
    .execute();
  await sql`create index oauth_grant_account_idx on oauth_grant (account_id, client_id) where revoked_at is null`.execute(db);
  await sql`create index oauth_grant_client_idx on oauth_grant (client_id) where revoked_at is null`.execute(db);
  await sql`create index oauth_grant_revoked_idx on oauth_grant (revoked_at) where revoked_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_grant').execute();
  await db.schema.dropTable('oauth_model').execute();
  await db.schema.dropTable('oauth_app').execute();
  await db.schema.dropTable('signing_key').execute();
}
