import { sql, type Kysely } from 'kysely';

/**
 * API keys (docs/api-keys.md): credentials of an organization, for servers
 * and scripts, each with a role (`admin` or `member`; never `owner`: a key cannot make or unmake
 * owners, nor delete the organization).
 * - The key itself (`sk_<prefix>_<secret>`) is never stored: `secret_hash` is its SHA-256 (hex),
 *   unique, which is also how a presented key is found. `prefix` is the key's non-secret part,
 *   shown in lists and logs to tell keys apart.
 * - Revocation sets `revoked_at`; a key row is never deleted by the application, so the audit
 *   entries that name a key as their actor keep pointing at it (the foreign key added below has
 *   no action: audit entries are append-only, migration 0008, and their trigger refuses a
 *   set-null of `actor_api_key_id`). The rows go only with their organization, whose audit
 *   entries go in the same statement (`audit_entry.organization_id` cascades too): an entry
 *   naming a key must be in the key's organization (checked).
 * - Every instance keeps the keys it verified in memory; a trigger notifies `api_key_revoked`
 *   with the key's id when a key is revoked or deleted (its organization deleted), delivered at
 *   commit, so every instance forgets it at once (src/api-keys/verifier.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_key')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'member')`))
    .addColumn('prefix', 'text', (c) => c.notNull().check(sql`prefix ~ '^[0-9A-Za-z]{8}$'`))
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique().check(sql`secret_hash ~ '^[0-9a-f]{64}$'`))
    // the key belongs to the organization, not to the person who made it: it stays when they go
    .addColumn('created_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .execute();
  // the organization's list: its live keys
  await sql`create index api_key_organization_idx on api_key (organization_id, created_at) where revoked_at is null`.execute(db);

  await sql`create function api_key_revoked_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_key_revoked', old.id::text);
      return null;
    end $$`.execute(db);
  await sql`create trigger api_key_revoked_notify after update of revoked_at on api_key
    for each row when (old.revoked_at is null and new.revoked_at is not null) execute function api_key_revoked_notify()`.execute(db);
  await sql`create trigger api_key_deleted_notify after delete on api_key
    for each row execute function api_key_revoked_notify()`.execute(db);

  // An entry whose actor is a key belongs to the key's organization (a key acts nowhere else), so
  // an organization's deletion takes its keys and every entry naming them in one statement; an
  // entry naming a key elsewhere would make that deletion fail.
  await sql`alter table api_key add constraint api_key_id_organization_key unique (id, organization_id)`.execute(db);
  await sql`alter table audit_entry add constraint audit_entry_api_key_in_organization
    check (actor_api_key_id is null or organization_id is not null)`.execute(db);
  await sql`alter table audit_entry add constraint audit_entry_actor_api_key_fkey
    foreign key (actor_api_key_id, organization_id) references api_key (id, organization_id)`.execute(db);
  // a key's row going (with its organization) looks for entries naming it: without an index, a scan of the whole log
  await sql`create index audit_entry_actor_api_key_idx on audit_entry (actor_api_key_id) where actor_api_key_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audit_entry_actor_api_key_idx`.execute(db);
  await sql`alter table audit_entry drop constraint audit_entry_actor_api_key_fkey`.execute(db);
  await sql`alter table audit_entry drop constraint audit_entry_api_key_in_organization`.execute(db);
  await db.schema.dropTable('api_key').execute();
  await sql`drop function api_key_revoked_notify()`.execute(db);
}
