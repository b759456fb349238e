/**
 * Ended sessions are deleted once they can matter to nothing: revoked families (a deleted
 * account's too) and expired ones, the access-token lifetime plus an hour after they ended;
 * live families and recently ended ones stay.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { purgeEndedSessions } from '../../src/auth/session-purge.js';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const TTL = 900;

for (const db of testDatabases()) {
  describe(`Ended sessions purge on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { ACCESS_TOKEN_TTL: String(TTL) });
    });
    after(() => t.stop());

    it('deletes families revoked or expired longer ago than the token lifetime plus an hour, with their tokens, and nothing else', async () => {
      const kysely = t.system.database.db;
      const { email } = await signUp(t.client);
      const sessions = [];
      for (let i = 0; i < 5; i++) {
        const res = await logIn(t.client, email);
        assert.equal(res.status, 200);
        sessions.push(res.body['refresh-token'] as string);
      }
      const families = (
        await kysely
          .selectFrom('refresh_family')
          .innerJoin('account', 'account.id', 'refresh_family.account_id')
          .select('refresh_family.id')
          .where('account.email', '=', email)
          .orderBy('refresh_family.created_at')
          .execute()
      ).map((r) => r.id);
      assert.equal(families.length, 5);
      const [oldRevoked, recentRevoked, oldExpired, recentExpired, live] = families;
      const ago = (seconds: number) => sql<Date>`now() - ${seconds}::int * interval '1 second'`;
      await kysely
        .updateTable('refresh_family')
        .set({ revoked_at: ago(TTL + 3700) })
        .where('id', '=', oldRevoked)
        .execute();
      await kysely
        .updateTable('refresh_family')
        .set({ revoked_at: ago(TTL) })
        .where('id', '=', recentRevoked)
        .execute();
      await kysely
        .updateTable('refresh_family')
        .set({ expires_at: ago(TTL + 3700) })
        .where('id', '=', oldExpired)
        .execute();
      await kysely
        .updateTable('refresh_family')
        .set({ expires_at: ago(60) })
        .where('id', '=', recentExpired)
        .execute();

      assert.equal(await purgeEndedSessions(kysely, TTL), 2);
      const left = (await kysely.selectFrom('refresh_family').select('id').where('id', 'in', families).execute()).map((r) => r.id).sort();
      assert.deepEqual(left, [recentRevoked, recentExpired, live].sort());
      const orphanTokens = await kysely.selectFrom('refresh_token').select('id').where('family_id', 'in', [oldRevoked, oldExpired]).execute();
      assert.equal(orphanTokens.length, 0, 'their tokens went with them');
      assert.equal(await purgeEndedSessions(kysely, TTL), 0, 'nothing more to delete');
      // the live session still refreshes
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': sessions[4] } })).status, 200);
    });
  });
}
