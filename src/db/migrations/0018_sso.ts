import { sql, type Kysely } from 'kysely';

/**
 * Enterprise sign-on and directory sync (docs/sso.md).
 * - `org_domain`: a domain an organization claims, proven by a DNS TXT record holding `txt_value`;
 *   a verified domain belongs to one organization (the partial unique index decides races).
 * - `saml_connection`: one identity provider per organization, from its pasted metadata.
 * - `saml_request`: the AuthnRequests we sent and not yet answered; a response must answer one
 *   (InResponseTo) and uses it up. `saml_assertion`: the assertion ids already accepted, kept
 *   until after they expire, so a response is never accepted twice.
 * - `scim_token`: a directory's bearer token (SHA-256 hash only) with the role its users get.
 * - `membership.suspended_at`: set by a directory (`active: false`): the membership grants nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('org_domain')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull().check(sql`domain = lower(domain) and length(domain) <= 253`))
    .addColumn('txt_value', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('org_domain_organization_domain_key', ['organization_id', 'domain'])
    .execute();
  await sql`create unique index org_domain_verified_idx on org_domain (domain) where verified_at is not null`.execute(db);

  await db.schema
    .createTable('saml_connection')
    .addColumn('organization_id', 'uuid', (c) => c.primaryKey().references('organization.id').onDelete('cascade'))
    .addColumn('metadata_xml', 'text', (c) => c.notNull())
    .addColumn('idp_entity_id', 'text', (c) => c.notNull())
    .addColumn('idp_sso_url', 'text', (c) => c.notNull())
    // the IdP's signing certificates, base64 DER (a metadata may list two during a rollover)
    .addColumn('idp_certificates', sql`text[]`, (c) => c.notNull())
    .addColumn('certificate_expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('default_role', 'text', (c) => c.notNull().check(sql`default_role in ('member', 'admin')`))
    .addColumn('enforced', 'boolean', (c) => c.notNull().defaultTo(false))
    // when the owners were told the certificate expires soon (once per certificate)
    .addColumn('expiry_warned_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('saml_request')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('saml_request_expires_idx').on('saml_request').column('expires_at').execute();

  await db.schema
    .createTable('saml_assertion')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('saml_assertion_pkey', ['organization_id', 'id'])
    .execute();
  await db.schema.createIndex('saml_assertion_expires_idx').on('saml_assertion').column('expires_at').execute();

  await db.schema
    .createTable('scim_token')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('default_role', 'text', (c) => c.notNull().check(sql`default_role in ('member', 'admin')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('scim_token_organization_idx').on('scim_token').column('organization_id').execute();

  await db.schema.alterTable('membership').addColumn('suspended_at', 'timestamptz').execute();
  // the directory's own id of the user (SCIM externalId), per organization
  await db.schema.alterTable('membership').addColumn('scim_external_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('membership').dropColumn('scim_external_id').execute();
  await db.schema.alterTable('membership').dropColumn('suspended_at').execute();
  for (const table of ['scim_token', 'saml_assertion', 'saml_request', 'saml_connection', 'org_domain']) {
    await db.schema.dropTable(table).execute();
  }
}
