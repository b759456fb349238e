import { sql, type Kysely } from 'kysely';

/**
 * The MCP server's records (docs/mcp.md):
 * - `oauth_grant.resources`: the resources (RFC 8707) a grant reaches, `APP_URL/api` and/or
 *   `APP_URL/mcp`: a grant for the MCP server is an AI assistant in account settings. Filled from
 *   the provider's stored grants.
 * - `oauth_grant.client_name`: the name a Client ID Metadata Document gave its client when the
 *   grant was made (the provider keeps the document a day at most; the connected app keeps its name).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('oauth_grant')
    .addColumn('resources', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
  await db.schema.alterTable('oauth_grant').addColumn('client_name', 'text').execute();
  await sql`update oauth_grant g set resources = array(select jsonb_object_keys(coalesce(m.payload::jsonb -> 'resources', '{}'::jsonb)))
    from oauth_model m where m.model = 'Grant' and m.id = g.id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_grant').dropColumn('resources').dropColumn('client_name').execute();
}
