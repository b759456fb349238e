import { sql, type Kysely } from 'kysely';

/**
 * The customer's audit trail streamed to its SIEM (docs/audit.md, "Streams"):
 * - `audit_stream`: an organization's destinations (https, splunk, datadog, s3), their settings
 *   and sealed credentials, their state (active or paused) and the delivery's own state: the
 *   batch in flight, its attempts and lease, the failure streak, the last error.
 * - `audit_stream_entry`: the entries a stream has not delivered yet, one row per stream and
 *   entry, written by a trigger in the transaction that appends the entry, so no entry committed
 *   while a stream exists can be missed whatever order transactions commit in; `batch_id` fixes
 *   the batch an entry was first sent in (a retry sends the same ones). Delivered rows go.
 *   Its foreign key to the entry keeps retention from deleting what a stream still owes.
 * - Retention: `audit_entry_prune_organization(org, before)` (SECURITY DEFINER, like
 *   `audit_entry_prune`) deletes an organization's entries older than `before` that no stream still
 *   owes; `audit_entry_prune(before)` skips those too now. The delete guard lets both through.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_stream')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('https', 'splunk', 'datadog', 's3')`))
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('credentials_sealed', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'paused')`))
    .addColumn('paused_reason', 'text', (c) => c.check(sql`paused_reason in ('manual', 'failing')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_delivered_at', 'timestamptz')
    .addColumn('delivered_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'timestamptz')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('batch_id', 'uuid')
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .execute();
  await sql`create index audit_stream_organization_idx on audit_stream (organization_id)`.execute(db);

  await db.schema
    .createTable('audit_stream_entry')
    .addColumn('stream_id', 'uuid', (c) => c.notNull().references('audit_stream.id').onDelete('cascade'))
    // no action: an owed entry cannot be deleted, but the cascade of an organization's deletion takes both
    .addColumn('entry_id', 'bigint', (c) => c.notNull().references('audit_entry.id'))
    .addColumn('batch_id', 'uuid')
    .addPrimaryKeyConstraint('audit_stream_entry_pkey', ['stream_id', 'entry_id'])
    .execute();
  await sql`create index audit_stream_entry_entry_idx on audit_stream_entry (entry_id)`.execute(db);
  await sql`create index audit_stream_entry_batch_idx on audit_stream_entry (stream_id, batch_id) where batch_id is not null`.execute(db);

  await sql`create function audit_entry_to_streams() returns trigger language plpgsql as $$
    begin
      insert into audit_stream_entry (stream_id, entry_id)
        select s.id, new.id from audit_stream s where s.organization_id = new.organization_id;
      if found then
        perform pg_notify('audit_stream_due', '');
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger audit_entry_to_streams after insert on audit_entry
    for each row when (new.organization_id is not null) execute function audit_entry_to_streams()`.execute(db);

  await sql`create or replace function audit_entry_prune(older_than timestamptz) returns bigint
    language plpgsql security definer set search_path from current as $$
    declare
      pruned bigint;
    begin
      delete from audit_entry e where e.created_at < older_than
        and not exists (select 1 from audit_stream_entry p where p.entry_id = e.id);
      get diagnostics pruned = row_count;
      return pruned;
    end $$`.execute(db);
  await sql`create function audit_entry_prune_organization(organization uuid, older_than timestamptz) returns bigint
    language plpgsql security definer set search_path from current as $$
    declare
      pruned bigint;
    begin
      delete from audit_entry e where e.organization_id = organization and e.created_at < older_than
        and not exists (select 1 from audit_stream_entry p where p.entry_id = e.id);
      get diagnostics pruned = row_count;
      return pruned;
    end $$`.execute(db);
  await sql`revoke all on function audit_entry_prune_organization(uuid, timestamptz) from public`.execute(db);
  await guard(db, true);
}

/** The delete guard of migration 0013, letting the organization's prune through too (or not, going down). */
async function guard(db: Kysely<unknown>, withOrganizationPrune: boolean): Promise<void> {
  const alsoOrganization = withOrganizationPrune ? sql`or position('audit_entry_prune_organization(uuid,timestamp with time zone)' in stack) > 0` : sql``;
  await sql`create or replace function audit_entry_no_delete() returns trigger language plpgsql as $$
    declare
      stack text;
    begin
      -- an organization's deletion cascades from inside the foreign key's own trigger
      if pg_trigger_depth() > 1 then
        return old;
      end if;
      -- the prunes: the DELETE is their own statement, running as the table's owner
      get diagnostics stack = pg_context;
      if (position('audit_entry_prune(timestamp with time zone)' in stack) > 0 ${alsoOrganization})
         and current_user = (select pg_get_userbyid(relowner) from pg_class where oid = 'audit_entry'::regclass) then
        return old;
      end if;
      raise exception 'audit entries are append-only' using errcode = 'P0001';
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await guard(db, false);
  await sql`drop function audit_entry_prune_organization(uuid, timestamptz)`.execute(db);
  await sql`create or replace function audit_entry_prune(older_than timestamptz) returns bigint
    language plpgsql security definer set search_path from current as $$
    declare
      pruned bigint;
    begin
      delete from audit_entry where created_at < older_than;
      get diagnostics pruned = row_count;
      return pruned;
    end $$`.execute(db);
  await sql`drop trigger audit_entry_to_streams on audit_entry`.execute(db);
  await sql`drop function audit_entry_to_streams()`.execute(db);
  await db.schema.dropTable('audit_stream_entry').execute();
  await db.schema.dropTable('audit_stream').execute();
}
