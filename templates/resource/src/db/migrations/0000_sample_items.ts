import { sql, type Kysely } from 'kysely';

/**
 * Sample items (docs/sample-items.md): an organization's own records, one row each, gone with
 * the organization. `created_at` keeps milliseconds, as the list's cursor does; the index serves
 * the list's keyset pages (newest first) of one organization.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sample_item')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`date_trunc('milliseconds', now())`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`date_trunc('milliseconds', now())`))
    .execute();
  await db.schema.createIndex('sample_item_page_idx').on('sample_item').columns(['organization_id', 'created_at desc', 'id desc']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sample_item').execute();
}
