/**
 * The owner rule: an organization keeps at least one owner, checked by the service (409) and
 * by the database at commit (migration 0007), also when two owners act on each other at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, type TestAccount } from './support.js';

for (const db of testDatabases()) {
  describe(`Organization owners on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(async () => t?.stop());

    const owners = async (orgId: string) =>
      (await t.system.database.db.selectFrom('membership').select('account_id').where('organization_id', '=', orgId).where('role', '=', 'owner').execute()).map(
        (r) => r.account_id,
      );

    it('gives every new account a personal organization it owns, which cannot be deleted or left', async () => {
      const a = await account(t);
      const list = await as(t, a, 'GET', '/api/orgs');
      assert.equal(list.status, 200);
      assert.equal(list.body.organizations.length, 1);
      const personal = list.body.organizations[0];
      assert.equal(personal.personal, true);
      assert.equal(personal.role, 'owner');
      assert.deepEqual(personal.subscription, { status: 'none', plan: null, 'current-period-end': null, 'cancel-at-period-end': false, 'has-customer': false });
      const del = await as(t, a, 'DELETE', `/api/orgs/${personal.id}`);
      assert.equal(del.status, 409);
      assert.equal(del.body.type, 'conflict');
      const leave = await as(t, a, 'DELETE', `/api/orgs/${personal.id}/members/${a.id}`);
      assert.equal(leave.status, 409);
      assert.equal(leave.body.reason, 'last-owner');
    });

    it('lets an owner step down once another owner exists, and refuses the last one', async () => {
      const [a, b] = await Promise.all([account(t), account(t)]);
      const org = await createOrg(t, a);
      assert.equal((await as(t, a, 'PATCH', `/api/orgs/${org}/members/${a.id}`, { role: 'admin' })).status, 409);
      await addMember(t, org, a, b, 'owner');
      const stepDown = await as(t, a, 'PATCH', `/api/orgs/${org}/members/${a.id}`, { role: 'admin' });
      assert.equal(stepDown.status, 200, stepDown.text);
      assert.equal(stepDown.body.role, 'admin');
      // a is admin now: it cannot touch the owner, and b, the last owner, cannot leave
      assert.equal((await as(t, a, 'PATCH', `/api/orgs/${org}/members/${b.id}`, { role: 'member' })).status, 409);
      assert.equal((await as(t, b, 'DELETE', `/api/orgs/${org}/members/${b.id}`)).status, 409);
      assert.deepEqual(await owners(org), [b.id]);
    });

    for (const action of ['demote', 'remove'] as const) {
      it(`lets exactly one of two owners ${action} the other when both try at once`, async () => {
        const [a, b] = await Promise.all([account(t), account(t)]);
        for (let round = 0; round < 5; round++) {
          const org = await createOrg(t, a, `Race ${round}`);
          await addMember(t, org, a, b, 'owner');
          const act = (who: TestAccount, other: TestAccount) =>
            action === 'demote'
              ? as(t, who, 'PATCH', `/api/orgs/${org}/members/${other.id}`, { role: 'member' })
              : as(t, who, 'DELETE', `/api/orgs/${org}/members/${other.id}`);
          const results = await Promise.all([act(a, b), act(b, a)]);
          const success = action === 'demote' ? 200 : 204;
          const [won, lost] = results[0].status === success ? results : [results[1], results[0]];
          assert.equal(won.status, success, results.map((r) => r.text).join(' | '));
          // 409 when both got past the role check before either committed; a loser checked after the
          // winner committed no longer has the role (403) or the membership (404)
          assert.ok([409, action === 'demote' ? 403 : 404].includes(lost.status), lost.text);
          assert.equal((await owners(org)).length, 1);
        }
      });
    }

    it("refuses, at commit, a transaction that leaves an organization without an owner (the database's own check)", async () => {
      const a = await account(t);
      const org = await createOrg(t, a);
      const dbx = t.system.database.db;
      await assert.rejects(
        dbx.transaction().execute(async (trx) => {
          await trx.updateTable('membership').set({ role: 'admin' }).where('organization_id', '=', org).execute();
        }),
        (err: { code?: string; message?: string }) => err.code === '23514' && /would have no owner/.test(err.message ?? ''),
      );
      await assert.rejects(
        dbx.transaction().execute(async (trx) => {
          await trx
            .insertInto('organization')
            .values({ name: 'Ownerless', slug: `ownerless-${Date.now()}` })
            .execute();
        }),
        (err: { code?: string }) => err.code === '23514',
      );
      assert.deepEqual(await owners(org), [a.id]);
    });

    if (db.name === 'postgres') {
      it("serializes the database's check: two transactions each demoting the other owner, committing together, cannot both commit", async () => {
        const [a, b] = await Promise.all([account(t), account(t)]);
        const org = await createOrg(t, a);
        await addMember(t, org, a, b, 'owner');
        let arrived = 0;
        let release!: () => void;
        const bothUpdated = new Promise<void>((resolve) => {
          release = resolve;
        });
        // no lock taken by the code: only the deferred trigger stands between the two
        const demote = (id: string) =>
          t.system.database.db.transaction().execute(async (trx) => {
            await trx.updateTable('membership').set({ role: 'member' }).where('organization_id', '=', org).where('account_id', '=', id).execute();
            if (++arrived === 2) release();
            await bothUpdated;
          });
        const results = await Promise.allSettled([demote(a.id), demote(b.id)]);
        assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
        assert.equal((await owners(org)).length, 1);
      });
    }

    it('deletes the organizations an account alone owns with the account, and keeps shared ownership', async () => {
      const [a, b] = await Promise.all([account(t), account(t)]);
      const alone = await createOrg(t, a, 'Alone');
      await addMember(t, alone, a, b, 'member');
      const shared = await createOrg(t, a, 'Shared');
      await addMember(t, shared, a, b, 'owner');
      const res = await as(t, a, 'POST', '/api/account/delete', { password: 'correct horse battery staple' });
      assert.equal(res.status, 204, res.text);
      const left = await t.system.database.db.selectFrom('organization').select('id').where('id', 'in', [alone, shared]).execute();
      assert.deepEqual(
        left.map((r) => r.id),
        [shared],
      );
      assert.deepEqual(await owners(shared), [b.id]);
      const personal = await sql<{ n: number }>`select count(*)::int as n from organization where personal_account_id = ${a.id}`.execute(t.system.database.db);
      assert.equal(personal.rows[0].n, 0);
    });
  });
}
