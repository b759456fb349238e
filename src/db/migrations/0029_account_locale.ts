import { sql, type Kysely } from 'kysely';

/**
 * An account's language (docs/i18n.md): `locale`, a supported locale (the application checks
 * which: adding one needs no migration), or null: its pages follow the browser and its emails
 * use DEFAULT_LOCALE.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table account add column locale text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table account drop column locale`.execute(db);
}
