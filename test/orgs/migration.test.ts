/** Migration 0007 gives every account that exists before it a personal organization it owns, on both databases. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { testDatabases } from '../support/system.js';

for (const db of testDatabases()) {
  describe(`Migration 0007 on ${db.name}`, () => {
    it('creates a personal organization, with the subscription, for each account that exists', async () => {
      const { url, drop } = await db.create({ empty: true });
      const kysely = new Kysely<any>({
        dialect: db.name === 'pglite' ? new PGliteDialect(new PGlite()) : new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
      });
      try {
        const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => MIGRATIONS } });
        const before = await migrator.migrateTo('0006_account_lifecycle');
        assert.equal(before.error, undefined);
        await sql`insert into account (email, name, password_hash, subscription_status, subscription_plan)
          values ('named@example.com', 'Ann', 'x', 'active', 'pro'), ('nameless@example.com', null, 'x', 'none', null)`.execute(kysely);
        const latest = await migrator.migrateTo('0007_organizations');
        assert.equal(latest.error, undefined);
        assert.deepEqual(
          latest.results?.map((r) => r.migrationName),
          ['0007_organizations'],
        );

        const rows = await sql<{ email: string; name: string; personal: boolean; role: string; subscription_status: string; subscription_plan: string | null }>`
          select a.email, o.name, o.personal, m.role, o.subscription_status, o.subscription_plan
          from account a join membership m on m.account_id = a.id join organization o on o.id = m.organization_id
          order by a.email`.execute(kysely);
        assert.deepEqual(rows.rows, [
          { email: 'named@example.com', name: 'Ann', personal: true, role: 'owner', subscription_status: 'active', subscription_plan: 'pro' },
          { email: 'nameless@example.com', name: 'nameless', personal: true, role: 'owner', subscription_status: 'none', subscription_plan: null },
        ]);
        // and back: 0007 goes down cleanly
        const down = await migrator.migrateTo('0006_account_lifecycle');
        assert.equal(down.error, undefined);
        const left = await sql<{
          n: number;
        }>`select count(*)::int as n from information_schema.tables where table_name in ('organization', 'membership', 'invitation')`.execute(kysely);
        assert.equal(left.rows[0].n, 0);
      } finally {
        await kysely.destroy();
        await drop();
      }
    });
  });
}
