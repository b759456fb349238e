/** The audit log's table: entries are appended in the caller's transaction and never changed; an account's deletion keeps its entries without it. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { appendAudit } from '../../src/audit/log.js';
import { signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

for (const db of testDatabases()) {
  describe(`Audit log table on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(() => t.stop());

    it('appends in the caller\'s transaction: a rolled-back change leaves no entry', async () => {
      const kysely = t.system.database.db;
      await assert.rejects(kysely.transaction().execute(async (trx) => {
        await appendAudit(trx, { action: 'test.rolled-back', actor: {}, origin: { ip: null, userAgent: null } });
        throw new Error('abort');
      }), /abort/);
      const rows = await kysely.selectFrom('audit_entry').select('id').where('action', '=', 'test.rolled-back').execute();
      assert.equal(rows.length, 0);
    });

    it('refuses an update or a malformed action, and keeps an entry without its account when the account is deleted', async () => {
      const kysely = t.system.database.db;
      const account = await signUp(t.client, 'audited@example.com');
      await appendAudit(kysely, {
        action: 'test.recorded', accountId: account.id, actor: { accountId: account.id },
        target: { type: 'account', id: account.id }, details: { n: 1, ok: true }, origin: { ip: '127.0.0.1', userAgent: 'x'.repeat(2000) },
      });
      const entry = await kysely.selectFrom('audit_entry').selectAll().where('action', '=', 'test.recorded').executeTakeFirstOrThrow();
      assert.deepEqual(entry.details, { n: 1, ok: true });
      assert.equal(entry.user_agent?.length, 512);

      await assert.rejects(sql`update audit_entry set action = 'test.changed' where id = ${entry.id}`.execute(kysely), /append-only/);
      await assert.rejects(sql`update audit_entry set account_id = gen_random_uuid() where id = ${entry.id}`.execute(kysely), /append-only/);
      await assert.rejects(appendAudit(kysely, { action: 'Not An Action', actor: {}, origin: { ip: null, userAgent: null } }), /check/);

      await sql`delete from account where id = ${account.id}`.execute(kysely);
      const kept = await kysely.selectFrom('audit_entry').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow();
      assert.equal(kept.account_id, null);
      assert.equal(kept.actor_account_id, null);
      assert.equal(kept.action, 'test.recorded');
    });
  });
}
