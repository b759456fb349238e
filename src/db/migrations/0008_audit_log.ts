import { sql, type Kysely } from 'kysely';

/**
 * The audit log (docs/audit.md): an append-only record of security-relevant changes. Each entry
 * names who acted (an account, an API key, or neither: the system or a payment provider), what it
 * did (`action`, `area.verb`), to what (`target_type`, `target_id`), from where (ip, user agent)
 * and when. `organization_id` is the organization whose log shows the entry (an account's own
 * events go to its personal organization); `account_id` is the account whose data the entry is, for
 * that account's export.
 * - Entries are never updated: a trigger refuses UPDATE except the foreign keys' own `set null`
 *   when an account goes (the entry stays, without the person).
 * - Entries are never deleted one by one: a trigger refuses DELETE except the cascade of their
 *   organization's deletion (the log goes with the organization) and `audit_entry_prune(before)`,
 *   the one way to apply a retention period.
 * - Newest first by `id` (an identity: one order all instances share), which is also the cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_entry')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('organization_id', 'uuid', (c) => c.references('organization.id').onDelete('cascade'))
    .addColumn('account_id', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('actor_account_id', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    // the API key's row comes with API keys (its migration adds the foreign key)
    .addColumn('actor_api_key_id', 'uuid')
    .addColumn('action', 'text', (c) => c.notNull().check(sql`action ~ '^[a-z0-9-]+(\\.[a-z0-9-]+)+$'`))
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('audit_entry_organization_idx').on('audit_entry').columns(['organization_id', 'id']).execute();
  await db.schema.createIndex('audit_entry_account_idx').on('audit_entry').columns(['account_id', 'id']).execute();
  // the recent entries of one action for one account: caps what unauthenticated callers can add (failed log-ins)
  await db.schema.createIndex('audit_entry_account_action_idx').on('audit_entry').columns(['account_id', 'action', 'created_at']).execute();
  // retention prunes by age
  await db.schema.createIndex('audit_entry_created_idx').on('audit_entry').column('created_at').execute();

  await sql`create function audit_entry_append_only() returns trigger language plpgsql as $$
    begin
      -- only the foreign keys' "set null" may touch an entry: everything else stays as written
      if (new.id, new.organization_id, new.action, new.target_type, new.target_id, new.ip, new.user_agent, new.details, new.created_at, new.actor_api_key_id)
         is not distinct from (old.id, old.organization_id, old.action, old.target_type, old.target_id, old.ip, old.user_agent, old.details, old.created_at, old.actor_api_key_id)
         and (new.account_id is null or new.account_id = old.account_id)
         and (new.actor_account_id is null or new.actor_account_id = old.actor_account_id) then
        return new;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`create trigger audit_entry_append_only before update on audit_entry
    for each row execute function audit_entry_append_only()`.execute(db);

  await sql`create function audit_entry_no_delete() returns trigger language plpgsql as $$
    begin
      -- an organization's deletion cascades from inside the foreign key's own trigger (depth > 1);
      -- audit_entry_prune() marks its transaction; any other DELETE is refused
      if pg_trigger_depth() > 1 or current_setting('saas.audit_prune', true) = 'on' then
        return old;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`create trigger audit_entry_no_delete before delete on audit_entry
    for each row execute function audit_entry_no_delete()`.execute(db);

  await sql`create function audit_entry_prune(older_than timestamptz) returns bigint language plpgsql as $$
    declare
      pruned bigint;
    begin
      perform set_config('saas.audit_prune', 'on', true);
      delete from audit_entry where created_at < older_than;
      get diagnostics pruned = row_count;
      perform set_config('saas.audit_prune', 'off', true);
      return pruned;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_entry').execute();
  await sql`drop function if exists audit_entry_append_only()`.execute(db);
  await sql`drop function if exists audit_entry_no_delete()`.execute(db);
  await sql`drop function if exists audit_entry_prune(timestamptz)`.execute(db);
}
