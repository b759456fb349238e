import { sql, type Kysely } from 'kysely';

/**
 * The audit log's append-only rule, held by the database against any session (docs/security.md, "The database role"). Migration 0008's guards could be undone by any
 * session: the prune's permission was a plain setting (`set_config('saas.audit_prune', 'on')`
 * then DELETE), an entry's account could be set null while the account still existed, and
 * TRUNCATE skipped the row triggers. Now:
 * - `audit_entry_prune(before)` is SECURITY DEFINER (it runs as the table's owner, whoever calls
 *   it) and no longer callable by PUBLIC; a DELETE passes the guard only from inside it (its call
 *   is on the statement's PL/pgSQL context) while running as the owner, or as the cascade of an
 *   organization's deletion. A setting proves nothing any more.
 * - An entry's `account_id` / `actor_account_id` become null only when that account's row is
 *   gone (the foreign key's `set null` as the account is deleted), never while it exists.
 * - TRUNCATE of `audit_entry` is refused by a statement trigger (also through a cascade).
 * The table's owner can still drop these triggers: the app should run as a role that does not own
 * the tables and has no DELETE, UPDATE or TRUNCATE on `audit_entry` (docs/deployment.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function audit_entry_prune(older_than timestamptz) returns bigint
    language plpgsql security definer set search_path from current as $$
    declare
      pruned bigint;
    begin
      delete from audit_entry where created_at < older_than;
      get diagnostics pruned = row_count;
      return pruned;
    end $$`.execute(db);
  // retention is the operator's decision: grant it to the role of the job that prunes
  await sql`revoke all on function audit_entry_prune(timestamptz) from public`.execute(db);

  await sql`create or replace function audit_entry_no_delete() returns trigger language plpgsql as $$
    declare
      stack text;
    begin
      -- an organization's deletion cascades from inside the foreign key's own trigger
      if pg_trigger_depth() > 1 then
        return old;
      end if;
      -- audit_entry_prune(): the DELETE is its own statement, running as the table's owner
      get diagnostics stack = pg_context;
      if position('audit_entry_prune(timestamp with time zone)' in stack) > 0
         and current_user = (select pg_get_userbyid(relowner) from pg_class where oid = 'audit_entry'::regclass) then
        return old;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);

  await sql`create or replace function audit_entry_append_only() returns trigger language plpgsql as $$
    begin
      -- only the foreign keys' "set null" may touch an entry, once the account is gone: everything else stays as written
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

  await sql`create function audit_entry_no_truncate() returns trigger language plpgsql as $$
    begin
      raise exception 'audit entries are append-only: TRUNCATE is refused' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`create trigger audit_entry_no_truncate before truncate on audit_entry
    for each statement execute function audit_entry_no_truncate()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger audit_entry_no_truncate on audit_entry`.execute(db);
  await sql`drop function audit_entry_no_truncate()`.execute(db);
  await sql`grant execute on function audit_entry_prune(timestamptz) to public`.execute(db);
  await sql`create or replace function audit_entry_prune(older_than timestamptz) returns bigint language plpgsql security invoker as $$
    declare
      pruned bigint;
    begin
      perform set_config('saas.audit_prune', 'on', true);
      delete from audit_entry where created_at < older_than;
      get diagnostics pruned = row_count;
      perform set_config('saas.audit_prune', 'off', true);
      return pruned;
    end $$`.execute(db);
  await sql`create or replace function audit_entry_no_delete() returns trigger language plpgsql as $$
    begin
      if pg_trigger_depth() > 1 or current_setting('saas.audit_prune', true) = 'on' then
        return old;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`create or replace function audit_entry_append_only() returns trigger language plpgsql as $$
    begin
      if (new.id, new.organization_id, new.action, new.target_type, new.target_id, new.ip, new.user_agent, new.details, new.created_at, new.actor_api_key_id)
         is not distinct from (old.id, old.organization_id, old.action, old.target_type, old.target_id, old.ip, old.user_agent, old.details, old.created_at, old.actor_api_key_id)
         and (new.account_id is null or new.account_id = old.account_id)
         and (new.actor_account_id is null or new.actor_account_id = old.actor_account_id) then
        return new;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
}
