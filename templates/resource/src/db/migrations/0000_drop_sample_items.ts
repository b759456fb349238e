import type { Kysely } from 'kysely';

/** Sample items were removed from the project (`npm run remove:resource -- sample-item --drop-table`): their table and its rows go. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sample_item').ifExists().execute();
}
