import { sql, type Kysely } from 'kysely';

/**
 * Platform administration (docs/admin.md):
 * - `account.locked_at` / `locked_reason` / `locked_by`: a locked account cannot start a
 *   session (every sign-in method, refresh included, answers 403 `account-locked`); locking
 *   ends its sessions.
 * - `refresh_family.actor_account_id`: the platform admin acting in an impersonated session
 *   (the access tokens' `act` claim). No foreign key on purpose: deleting the admin must not
 *   turn the session into an ordinary one of the account (a `set null` would); the session is
 *   revoked when its admin goes, and the purge deletes the row with the session's other rows.
 * - `audit_entry.impersonated_account_id`: the account an impersonated session acted as (the
 *   actor is then the admin); `audit_entry.admin_log`: the entry is in the admin audit log
 *   (every admin action, and every change made in an impersonated session).
 * - Search indexes: prefixes of email, name and organization name or slug in the "C"
 *   collation (bytewise), so a prefix is an index range whatever the database's collation and
 *   a page of it is read in index order (the query plan on a million accounts: docs/admin.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('account')
    .addColumn('locked_at', 'timestamptz')
    .addColumn('locked_reason', 'text', (c) => c.check(sql`length(locked_reason) <= 500`))
    .addColumn('locked_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .execute();
  await db.schema.alterTable('refresh_family').addColumn('actor_account_id', 'uuid').execute();
  // the impersonated sessions an admin started: ended with the admin's sessions
  await sql`create index refresh_family_actor_idx on refresh_family (actor_account_id) where actor_account_id is not null`.execute(db);

  await db.schema
    .alterTable('audit_entry')
    .addColumn('impersonated_account_id', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('admin_log', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`create index audit_entry_admin_idx on audit_entry (id) where admin_log`.execute(db);
  // the new columns are as immutable as the others: only their foreign key's `set null` may touch them
  await sql`create or replace function audit_entry_append_only() returns trigger language plpgsql as $$
    begin
      -- only the foreign keys' "set null" may touch an entry, once the account is gone (migration 0013): everything else stays as written
      if (new.id, new.organization_id, new.action, new.target_type, new.target_id, new.ip, new.user_agent, new.details, new.created_at,
          new.actor_api_key_id, new.admin_log)
         is not distinct from (old.id, old.organization_id, old.action, old.target_type, old.target_id, old.ip, old.user_agent, old.details,
          old.created_at, old.actor_api_key_id, old.admin_log)
         and (new.account_id is not distinct from old.account_id
              or (new.account_id is null and not exists (select 1 from account where id = old.account_id)))
         and (new.actor_account_id is not distinct from old.actor_account_id
              or (new.actor_account_id is null and not exists (select 1 from account where id = old.actor_account_id)))
         and (new.impersonated_account_id is not distinct from old.impersonated_account_id
              or (new.impersonated_account_id is null and not exists (select 1 from account where id = old.impersonated_account_id))) then
        return new;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);

  await sql`create index account_email_prefix_idx on account ((email collate "C"))`.execute(db);
  await sql`create index account_name_prefix_idx on account ((lower(name) collate "C"), id) where name is not null`.execute(db);
  await sql`create index account_created_idx on account (created_at desc, id desc)`.execute(db);
  await sql`create index organization_name_prefix_idx on organization ((lower(name) collate "C"), id)`.execute(db);
  await sql`create index organization_slug_prefix_idx on organization ((slug collate "C"))`.execute(db);
  await sql`create index organization_created_idx on organization (created_at desc, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of [
    'account_email_prefix_idx',
    'account_name_prefix_idx',
    'account_created_idx',
    'organization_name_prefix_idx',
    'organization_slug_prefix_idx',
    'organization_created_idx',
    'audit_entry_admin_idx',
    'refresh_family_actor_idx',
  ]) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  await sql`create or replace function audit_entry_append_only() returns trigger language plpgsql as $$
    begin
      if (new.id, new.organization_id, new.action, new.target_type, new.target_id, new.ip, new.user_agent, new.details, new.created_at, new.actor_api_key_id)
         is not distinct from (old.id, old.organization_id, old.action, old.target_type, old.target_id, old.ip, old.user_agent, old.details, old.created_at, old.actor_api_key_id)
         and (new.account_id is not distinct from old.account_id
              or (new.account_id is null and not exists (select 1 from account where id = old.account_id)))
         and (new.actor_account_id is not distinct from old.actor_account_id
              or (new.actor_account_id is null and not exists (select 1 from account where id = old.actor_account_id))) then
        return new;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
  await db.schema.alterTable('audit_entry').dropColumn('impersonated_account_id').dropColumn('admin_log').execute();
  await db.schema.alterTable('refresh_family').dropColumn('actor_account_id').execute();
  await db.schema.alterTable('account').dropColumn('locked_at').dropColumn('locked_reason').dropColumn('locked_by').execute();
}
