import { sql, type Kysely } from 'kysely';

/**
 * Files (docs/files.md):
 * - `stored_file`: one object in the store and what it belongs to: an account (its avatar) or an
 *   organization (its logo, its items' files); `pending` from `POST /api/uploads` until the upload
 *   is completed (then `stored`); a pending one is deleted after 24 hours. Deleted with its owner
 *   (the cascades).
 * - `storage_deletion`: the objects to delete from the store, a durable queue: a trigger adds a
 *   file's object (and its renditions) whenever its row goes, whatever deletes it (an account's
 *   or an organization's deletion, a replaced avatar, an expired upload), in that transaction.
 * - `account.avatar_file_id`, `organization.logo_file_id`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stored_file')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) => c.references('account.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.references('organization.id').onDelete('cascade'))
    .addColumn('uploaded_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'stored')`))
    .addColumn('renditions', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'::integer[]`))
    .addColumn('upload_used', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('stored_file_owner', sql`account_id is not null or organization_id is not null`)
    .execute();
  await sql`create index stored_file_org_idx on stored_file (organization_id) where organization_id is not null`.execute(db);
  await sql`create index stored_file_account_idx on stored_file (account_id) where account_id is not null`.execute(db);
  await sql`create index stored_file_pending_idx on stored_file (created_at) where status = 'pending'`.execute(db);
  await db.schema
    .createTable('storage_deletion')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('locked_until', 'timestamptz')
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index storage_deletion_due_idx on storage_deletion (next_attempt_at)`.execute(db);
  await sql`create function stored_file_deleted() returns trigger language plpgsql as $$
    begin
      insert into storage_deletion (key) values (old.key);
      insert into storage_deletion (key) select old.key || '.' || r || '.webp' from unnest(old.renditions) r;
      perform pg_notify('storage_deletion', '');
      return old;
    end $$`.execute(db);
  await sql`create trigger stored_file_deleted after delete on stored_file for each row execute function stored_file_deleted()`.execute(db);
  await db.schema
    .alterTable('account')
    .addColumn('avatar_file_id', 'uuid', (c) => c.references('stored_file.id').onDelete('set null'))
    .execute();
  await db.schema
    .alterTable('organization')
    .addColumn('logo_file_id', 'uuid', (c) => c.references('stored_file.id').onDelete('set null'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organization').dropColumn('logo_file_id').execute();
  await db.schema.alterTable('account').dropColumn('avatar_file_id').execute();
  await sql`drop trigger stored_file_deleted on stored_file`.execute(db);
  await sql`drop function stored_file_deleted()`.execute(db);
  await db.schema.dropTable('storage_deletion').execute();
  await db.schema.dropTable('stored_file').execute();
}
