/**
 * The audit log's append-only rule against any database session (issue 25, item 6; migration
 * 0013): the prune's old permission setting proves nothing, an entry's account is nulled only
 * once the account is gone, TRUNCATE is refused; and as the least-privilege role the docs
 * describe (PostgreSQL), the one sanctioned delete still works and nothing else does.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, as, createOrg } from '../orgs/support.js';

for (const db of testDatabases()) {
  describe(`Audit log append-only on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(async () => t?.stop());

    const oldEntry = async (organizationId: string, accountId: string | null = null) => {
      const row = await t.system.database.db
        .insertInto('audit_entry')
        .values({
          organization_id: organizationId,
          account_id: accountId,
          actor_account_id: accountId,
          action: 'test.old',
          created_at: new Date(Date.now() - 30 * 86_400_000),
          details: '{}',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    const exists = async (id: string) => (await t.system.database.db.selectFrom('audit_entry').select('id').where('id', '=', id).execute()).length === 1;

    it('refuses a delete behind the old prune setting, a nulled account that still exists, and TRUNCATE', async () => {
      const kysely = t.system.database.db;
      const owner = await account(t);
      const org = await createOrg(t, owner);
      const id = await oldEntry(org, owner.id);
      await assert.rejects(
        kysely.transaction().execute(async (trx) => {
          await sql`select set_config('saas.audit_prune', 'on', true)`.execute(trx);
          await sql`delete from audit_entry where id = ${id}`.execute(trx);
        }),
        /append-only/,
      );
      await assert.rejects(sql`update audit_entry set account_id = null where id = ${id}`.execute(kysely), /append-only/);
      await assert.rejects(sql`update audit_entry set actor_account_id = null where id = ${id}`.execute(kysely), /append-only/);
      // refused by the append-only rule, or first by the foreign key of what streams still owe
      await assert.rejects(sql`truncate audit_entry`.execute(kysely), /append-only|referenced in a foreign key/);
      await assert.rejects(sql`truncate organization cascade`.execute(kysely), /append-only/);
      assert.ok(await exists(id));

      // what stays allowed: the account's deletion nulls its entries, the organization's takes its log, the prune removes by age
      const other = await account(t);
      const shared = await createOrg(t, other);
      const kept = await oldEntry(shared, owner.id);
      assert.equal((await as(t, owner, 'POST', '/api/account/delete', { password: 'correct horse battery staple' })).status, 204);
      const row = await kysely.selectFrom('audit_entry').select(['account_id', 'actor_account_id']).where('id', '=', kept).executeTakeFirstOrThrow();
      assert.deepEqual(row, { account_id: null, actor_account_id: null });
      const pruned = await sql<{ n: string | number }>`select audit_entry_prune(now() - interval '1 day') as n`.execute(kysely);
      assert.ok(Number(pruned.rows[0].n) >= 1);
      assert.equal(await exists(kept), false);
    });

    if (db.name === 'postgres') {
      it('as a role that does not own the tables: the prune works, every other way to remove or rewrite an entry is refused', async () => {
        const owner = t.system.database.db;
        const role = `saas_app_${randomBytes(4).toString('hex')}`;
        // the least-privilege role of docs/deployment.md
        await sql.raw(`create role ${role} login`).execute(owner);
        await sql.raw(`grant usage on schema public to ${role}`).execute(owner);
        await sql.raw(`grant select, insert, update, delete on all tables in schema public to ${role}`).execute(owner);
        await sql.raw(`revoke update, delete, truncate on audit_entry from ${role}`).execute(owner);
        await sql.raw(`grant execute on function audit_entry_prune(timestamptz) to ${role}`).execute(owner);
        const url = new URL(t.system.config.databaseUrl!);
        url.username = role;
        const app = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
        try {
          const a = await account(t);
          const org = await createOrg(t, a);
          const id = await oldEntry(org);
          for (const attempt of [
            sql`delete from audit_entry where id = ${id}`,
            sql`update audit_entry set action = 'test.rewritten' where id = ${id}`,
            sql`truncate audit_entry`,
            sql`alter table audit_entry disable trigger audit_entry_no_delete`,
          ]) {
            await assert.rejects(attempt.execute(app), /permission denied|must be owner|append-only/);
          }
          await assert.rejects(
            app.transaction().execute(async (trx) => {
              await sql`select set_config('saas.audit_prune', 'on', true)`.execute(trx);
              await sql`delete from audit_entry where id = ${id}`.execute(trx);
            }),
            /permission denied|append-only/,
          );
          assert.ok(await exists(id));
          const pruned = await sql<{ n: string | number }>`select audit_entry_prune(now() - interval '1 day') as n`.execute(app);
          assert.ok(Number(pruned.rows[0].n) >= 1, 'the sanctioned delete runs as the owner');
          assert.equal(await exists(id), false);
          // an organization's deletion (the app's own route) still takes its log, the cascade running as the owner
          const b = await account(t);
          const gone = await createOrg(t, b);
          const entry = await oldEntry(gone);
          await sql`delete from organization where id = ${gone}`.execute(app);
          assert.equal(await exists(entry), false);
        } finally {
          await app.destroy();
          await sql.raw(`drop owned by ${role}`).execute(owner);
          await sql.raw(`drop role ${role}`).execute(owner);
        }
      });
    }
  });
}
