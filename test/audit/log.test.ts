/**
 * The audit log's table and how it is read: entries are appended in the caller's transaction and
 * never changed or deleted one by one (an organization's deletion and the retention prune are the
 * ways out); an account's deletion keeps its entries without it; a capped action stops at its cap.
 * Reading: `GET /api/orgs/:id/audit-log` and the `orgs/audit-log` query kind (admins; pages,
 * cursors, formats), and the account's entries in its export.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { appendAccountAudit, appendAudit, NO_ORIGIN } from '../../src/audit/log.js';
import { signUp } from '../support/auth.js';
import { FORMAT_BY_NAME } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';

for (const db of testDatabases()) {
  describe(`Audit log table on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(() => t.stop());

    it("appends in the caller's transaction: a rolled-back change leaves no entry", async () => {
      const kysely = t.system.database.db;
      await assert.rejects(
        kysely.transaction().execute(async (trx) => {
          await appendAudit(trx, { action: 'test.rolled-back', actor: {}, origin: { ip: null, userAgent: null } });
          throw new Error('abort');
        }),
        /abort/,
      );
      const rows = await kysely.selectFrom('audit_entry').select('id').where('action', '=', 'test.rolled-back').execute();
      assert.equal(rows.length, 0);
    });

    it('refuses an update or a malformed action, and keeps an entry without its account when the account is deleted', async () => {
      const kysely = t.system.database.db;
      const account = await signUp(t.client, 'audited@example.com');
      await appendAudit(kysely, {
        action: 'test.recorded',
        accountId: account.id,
        actor: { accountId: account.id },
        target: { type: 'account', id: account.id },
        details: { n: 1, ok: true },
        origin: { ip: '127.0.0.1', userAgent: 'x'.repeat(2000) },
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

    it("refuses a direct delete; an organization's deletion takes its log; audit_entry_prune removes entries by age", async () => {
      const kysely = t.system.database.db;
      const owner = await account(t);
      const org = await createOrg(t, owner, 'Short-lived');
      await kysely
        .insertInto('audit_entry')
        .values({
          organization_id: org,
          action: 'test.old',
          created_at: new Date(Date.now() - 10 * 86_400_000),
          details: '{}',
        })
        .execute();
      const actions = async () =>
        (await kysely.selectFrom('audit_entry').select('action').where('organization_id', '=', org).orderBy('id').execute()).map((r) => r.action);
      assert.deepEqual(await actions(), ['org.created', 'test.old']);
      await assert.rejects(sql`delete from audit_entry where organization_id = ${org}`.execute(kysely), /append-only/);
      // the prune lets only its own statement through: a delete after it in the same transaction is refused
      await assert.rejects(
        kysely.transaction().execute(async (trx) => {
          await sql`select audit_entry_prune(now() - interval '100 days')`.execute(trx);
          await sql`delete from audit_entry where organization_id = ${org}`.execute(trx);
        }),
        /append-only/,
      );
      assert.deepEqual(await actions(), ['org.created', 'test.old']);

      const pruned = await sql<{ n: string | number }>`select audit_entry_prune(now() - interval '1 day') as n`.execute(kysely);
      assert.ok(Number(pruned.rows[0].n) >= 1);
      assert.deepEqual(await actions(), ['org.created'], 'only entries older than the cut-off go');

      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}`)).status, 204);
      assert.deepEqual(await actions(), []);
    });

    it('stops appending a capped action at its cap per account and window', async () => {
      const kysely = t.system.database.db;
      const me = await account(t);
      const cap = { count: 2, seconds: 60 };
      const appended = [];
      for (let i = 0; i < 3; i++) {
        appended.push(await appendAccountAudit(kysely, { action: 'test.capped', accountId: me.id, actor: {}, origin: NO_ORIGIN }, cap));
      }
      assert.deepEqual(appended, [true, true, false]);
      const rows = await kysely
        .selectFrom('audit_entry')
        .select(['organization_id', 'actor_account_id'])
        .where('account_id', '=', me.id)
        .where('action', '=', 'test.capped')
        .execute();
      assert.equal(rows.length, 2);
      const personal = await kysely.selectFrom('organization').select('id').where('personal_account_id', '=', me.id).executeTakeFirstOrThrow();
      assert.deepEqual(rows[0], { organization_id: personal.id, actor_account_id: null });
      // another action of the same account is not held back by it
      assert.equal(await appendAccountAudit(kysely, { action: 'test.other', accountId: me.id, actor: {}, origin: NO_ORIGIN }, cap), true);
    });

    describe('reading', () => {
      let owner: TestAccount;
      let admin: TestAccount;
      let member: TestAccount;
      let outsider: TestAccount;
      let org: string;
      let allIds: string[];
      const log = (who: TestAccount | undefined, query = '') => as(t, who, 'GET', `/api/orgs/${org}/audit-log${query}`);
      const kind = (who: TestAccount | undefined, params: Record<string, unknown>) =>
        as(t, who, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/audit-log', 'org-id': org, ...params });

      before(async () => {
        [owner, admin, member, outsider] = await Promise.all([account(t), account(t), account(t), account(t)]);
        org = await createOrg(t, owner, 'Readable');
        await addMember(t, org, owner, admin, 'admin');
        await addMember(t, org, owner, member, 'member');
        assert.equal((await as(t, admin, 'PATCH', `/api/orgs/${org}/members/${member.id}`, { role: 'admin' })).status, 200);
        assert.equal((await as(t, admin, 'PATCH', `/api/orgs/${org}/members/${member.id}`, { role: 'member' })).status, 200);
        for (let i = 0; i < 3; i++)
          await appendAudit(t.system.database.db, { action: 'test.filler', organizationId: org, actor: {}, details: { i }, origin: NO_ORIGIN });
        const rows = await t.system.database.db.selectFrom('audit_entry').select('id').where('organization_id', '=', org).orderBy('id', 'desc').execute();
        allIds = rows.map((r) => String(r.id));
        assert.equal(allIds.length, 10);
      });

      it('answers admins and owners, 403 a member, 404 a non-member, 401 without a token', async () => {
        assert.equal((await log(owner)).status, 200);
        assert.equal((await log(admin)).status, 200);
        const refused = await log(member);
        assert.equal(refused.status, 403);
        assert.deepEqual([refused.body.type, refused.body['required-role'], refused.body.role], ['forbidden', 'admin', 'member']);
        assert.equal((await log(outsider)).status, 404);
        assert.equal((await log(outsider)).body.type, 'not-found');
        assert.equal((await log(undefined)).status, 401);
      });

      it('pages newest first with an opaque cursor until next-cursor is null', async () => {
        const first = await log(admin);
        assert.deepEqual(
          first.body.entries.map((e: { id: string }) => e.id),
          allIds,
          'the default page (50) holds them all',
        );
        assert.equal(first.body['next-cursor'], null);
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let pages = 0; pages < 10; pages++) {
          const res = await log(admin, `?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          assert.equal(res.status, 200, res.text);
          assert.ok(res.body.entries.length <= 4);
          seen.push(...res.body.entries.map((e: { id: string }) => e.id));
          cursor = res.body['next-cursor'];
          if (!cursor) break;
        }
        assert.deepEqual(seen, allIds, 'every entry once, newest first');
      });

      it('shows who acted and on whom, with emails of current members only', async () => {
        const { entries } = (await log(owner)).body;
        const roleChange = entries.find((e: { action: string }) => e.action === 'org.member-role-changed');
        assert.deepEqual(roleChange, {
          id: roleChange.id,
          action: 'org.member-role-changed',
          actor: { 'account-id': admin.id, email: admin.email, 'api-key-id': null },
          target: { type: 'account', id: member.id, email: member.email },
          ip: '127.0.0.1',
          'user-agent': null,
          details: { role: 'member', 'previous-role': 'admin' },
          'created-at': roleChange['created-at'],
        });
        const filler = entries.find((e: { action: string }) => e.action === 'test.filler');
        assert.deepEqual([filler.actor, filler.target], [{ 'account-id': null, 'api-key-id': null }, null]);

        // once the admin leaves, its entries no longer tell its address
        const other = await account(t);
        const shortOrg = await createOrg(t, owner, 'Transient');
        await addMember(t, shortOrg, owner, other, 'admin');
        assert.equal((await as(t, other, 'DELETE', `/api/orgs/${shortOrg}/members/${other.id}`)).status, 204);
        const after = (await as(t, owner, 'GET', `/api/orgs/${shortOrg}/audit-log`)).body.entries;
        const left = after.find((e: { action: string }) => e.action === 'org.member-left');
        assert.deepEqual(left.actor, { 'account-id': other.id, 'api-key-id': null });
        assert.deepEqual(left.target, { type: 'account', id: other.id });
      });

      it('refuses a bad limit or a cursor it did not issue with 400 request-coercion', async () => {
        for (const query of ['?limit=0', '?limit=101', '?limit=x', '?cursor=', '?extra=1']) {
          const res = await log(admin, query);
          assert.equal(res.status, 400, query);
          assert.deepEqual([res.body.type, res.body.in], ['request-coercion', 'query'], query);
        }
        const forged = [
          'not-a-cursor',
          Buffer.from('a0').toString('base64url'),
          Buffer.from('a99999999999999999999').toString('base64url'),
          Buffer.from('a9223372036854775808').toString('base64url'),
          Buffer.from('12').toString('base64url'),
        ];
        for (const cursor of forged) {
          const res = await log(admin, `?cursor=${encodeURIComponent(cursor)}`);
          assert.equal(res.status, 400, cursor);
          assert.deepEqual(
            [res.body.type, res.body.in, res.body.errors],
            ['request-coercion', 'query', [{ path: '/cursor', message: 'is not a cursor this service issued' }]],
          );
        }
      });

      it('answers in EDN and Transit with the same keys', async () => {
        for (const format of [FORMAT_BY_NAME.edn, FORMAT_BY_NAME.transit]) {
          const res = await t.client('GET', `/api/orgs/${org}/audit-log?limit=2`, { format, headers: { authorization: `Bearer ${admin.token}` } });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.headers['content-type'], format.mime);
          assert.equal(res.body.entries.length, 2);
          assert.equal(typeof res.body['next-cursor'], 'string');
          assert.ok('created-at' in res.body.entries[0] && 'user-agent' in res.body.entries[0]);
        }
      });

      it('serves the same pages through the query kind orgs/audit-log, with the same rule', async () => {
        const first = await kind(admin, { limit: 5 });
        assert.equal(first.status, 200, first.text);
        assert.deepEqual(
          first.body.entries.map((e: { id: string }) => e.id),
          allIds.slice(0, 5),
        );
        const second = await kind(owner, { limit: 5, cursor: first.body['next-cursor'] });
        assert.deepEqual(
          second.body.entries.map((e: { id: string }) => e.id),
          allIds.slice(5, 10),
        );
        assert.deepEqual((await kind(admin, {})).body, (await log(admin)).body);
        assert.equal((await kind(member, {})).status, 403);
        assert.equal((await kind(outsider, {})).status, 404);
        assert.equal((await kind(undefined, {})).status, 401);
        const bad = await kind(admin, { cursor: 'garbage' });
        assert.deepEqual([bad.status, bad.body.type, bad.body.in], [400, 'request-coercion', 'body']);
        assert.equal((await kind(admin, { limit: 101 })).status, 400);
      });

      it("puts the account's own entries in its export, newest first, and none of another account's", async () => {
        const res = await as(t, member, 'GET', '/api/account/export');
        assert.equal(res.status, 200, res.text);
        const log = res.body['audit-log'] as Array<{
          action: string;
          'organization-id': string | null;
          actor: { 'account-id': string | null };
          ip: string | null;
        }>;
        assert.equal(res.body['audit-log-truncated'], false);
        assert.deepEqual(
          log.map((e) => e.action),
          ['org.invitation-accepted', 'account.logged-in', 'account.email-verified', 'account.signed-up'],
        );
        assert.equal(log[0]['organization-id'], org);
        assert.ok(
          log.every((e) => e.actor['account-id'] === member.id),
          'what others did to the account (its role changes) is theirs',
        );
        const ids = (log as unknown as Array<{ id: string }>).map((e) => Number(e.id));
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => b - a),
        );
      });
    });
  });
}
