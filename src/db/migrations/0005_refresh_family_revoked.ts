import { sql, type Kysely } from 'kysely';

// Instances read the families revoked since their last look (at start, and while their
// revocation listener is down): a range on revoked_at. Partial, since most families never are.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('refresh_family_revoked_idx').on('refresh_family').column('revoked_at').where(sql.ref('revoked_at'), 'is not', null).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('refresh_family_revoked_idx').execute();
}
