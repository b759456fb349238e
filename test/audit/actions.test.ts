/**
 * What the audit log records, through the HTTP API: each security-relevant change writes one
 * entry with the right organization, account, actor, target and origin, in the change's own
 * transaction (a change rolled back at commit leaves no entry; an entry that cannot be written
 * takes its change with it); a refused log-in of an unknown email writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { AUDIT_ACTION_LABELS } from '../../src/client/audit/action-labels.js';
import { logIn, PASSWORD, uniqueEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, verify } from '../orgs/support.js';

const UA = 'audit-test-agent/1.0';
const NEW_PASSWORD = 'another long passphrase';

interface Row {
  id: string;
  organization_id: string | null;
  account_id: string | null;
  actor_account_id: string | null;
  actor_api_key_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

for (const db of testDatabases()) {
  describe(`Audit log entries on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { REFRESH_REUSE_GRACE: '0' });
    });
    after(async () => t?.stop());

    const rows = async (where: { organizationId?: string; accountId?: string; action?: string }): Promise<Row[]> => {
      let q = t.system.database.db
        .selectFrom('audit_entry')
        .select([
          'id',
          'organization_id',
          'account_id',
          'actor_account_id',
          'actor_api_key_id',
          'action',
          'target_type',
          'target_id',
          'ip',
          'user_agent',
          'details',
        ]);
      if (where.organizationId) q = q.where('organization_id', '=', where.organizationId);
      if (where.accountId) q = q.where('account_id', '=', where.accountId);
      if (where.action) q = q.where('action', '=', where.action);
      return (await q.orderBy('id').execute()) as Row[];
    };
    /** the entries of an action, waiting (bounded) for those written after the answer */
    const eventually = async (where: Parameters<typeof rows>[0], count: number): Promise<Row[]> => {
      for (let i = 0; ; i++) {
        const found = await rows(where);
        if (found.length >= count || i === 150) return found;
        await sleep(20);
      }
    };
    const personalOrg = async (accountId: string) =>
      (await t.system.database.db.selectFrom('organization').select('id').where('personal_account_id', '=', accountId).executeTakeFirstOrThrow()).id;
    const withUa = { 'user-agent': UA };

    it("records an account's own events in its personal organization, with the account as actor", async () => {
      const email = uniqueEmail('audited');
      const created = await t.client('POST', '/api/account/sign-up', { headers: withUa, body: { email, password: PASSWORD } });
      assert.equal(created.status, 201, created.text);
      const id = created.body.account.id as string;
      const personal = await personalOrg(id);
      const loggedIn = await t.client('POST', '/api/account/log-in', { headers: withUa, body: { email, password: PASSWORD } });
      assert.equal(loggedIn.status, 200);
      const access = loggedIn.body['access-token'] as string;
      // opened in the browser that signed up: its session and the password stay
      await verify(t, email, { id, email, token: access });
      const bearer = { authorization: `Bearer ${access}`, ...withUa };

      // the password changes from this session; the email changes through the link to the new address
      assert.equal(
        (await t.client('POST', '/api/account/change-password', { headers: bearer, body: { 'current-password': PASSWORD, password: NEW_PASSWORD } })).status,
        204,
      );
      const newEmail = uniqueEmail('moved');
      assert.equal(
        (await t.client('POST', '/api/account/change-email', { headers: bearer, body: { password: NEW_PASSWORD, 'new-email': newEmail } })).status,
        202,
      );
      const confirm = await mailedLink(t.system, newEmail, 'confirm-email-change');
      assert.equal((await t.client('POST', '/api/account/confirm-email', { headers: withUa, body: { token: confirm.token } })).status, 200);

      const entries = await rows({ accountId: id });
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'account.signed-up',
          'account.logged-in',
          'account.email-verified',
          'account.password-changed',
          'account.email-change-requested',
          'account.email-changed',
        ],
      );
      for (const e of entries) {
        assert.equal(e.organization_id, personal, `${e.action} is in the personal organization's log`);
        assert.equal(e.actor_account_id, id, `${e.action}: the account acted`);
        assert.equal(e.actor_api_key_id, null);
        assert.equal(e.ip, '127.0.0.1');
      }
      assert.equal(entries[0].user_agent, UA);
      assert.deepEqual([entries[0].target_type, entries[0].target_id], ['account', id]);
      assert.equal(entries[1].target_type, 'session');
      assert.deepEqual(entries[1].details, { method: 'password' });
      assert.deepEqual(entries[2].details, { email });
      assert.deepEqual(entries[4].details, { 'new-email': newEmail });
      assert.deepEqual(entries[5].details, { 'previous-email': email, email: newEmail });
    });

    it('records sessions ending: log-out, "end session", and a reused refresh token (no actor: the family is revoked)', async () => {
      const me = await account(t);
      const personal = await personalOrg(me.id);
      const second = await logIn(t.client, me.email);
      const third = await logIn(t.client, me.email);

      // log-out with a refresh token in the body
      assert.equal((await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': second.body['refresh-token'] } })).status, 204);
      // the same again ends nothing: no second entry
      assert.equal((await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': second.body['refresh-token'] } })).status, 204);
      // a refresh, then the rotated token again (no grace here): the family is revoked
      const rotated = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': third.body['refresh-token'] } });
      assert.equal(rotated.status, 200);
      const reused = await t.client('POST', '/api/account/refresh', { headers: withUa, body: { 'refresh-token': third.body['refresh-token'] } });
      assert.equal(reused.status, 401);
      // "end session" on one of the account's own
      const live = (await as(t, me, 'GET', '/api/account/sessions')).body.sessions as Array<{ id: string; current: boolean }>;
      assert.equal(live.length, 1, 'only the first session is left');
      const fourth = await logIn(t.client, me.email);
      assert.equal(fourth.status, 200);
      const other = ((await as(t, me, 'GET', '/api/account/sessions')).body.sessions as Array<{ id: string; current: boolean }>).find((s) => !s.current)!;
      assert.equal((await as(t, me, 'DELETE', `/api/account/sessions/${other.id}`)).status, 204);

      const loggedOut = await rows({ accountId: me.id, action: 'account.logged-out' });
      assert.equal(loggedOut.length, 1, 'a log-out that ends nothing records nothing');
      assert.equal(loggedOut[0].actor_account_id, me.id);
      assert.equal(loggedOut[0].organization_id, personal);
      assert.equal(loggedOut[0].target_type, 'session');
      const [reuse] = await rows({ accountId: me.id, action: 'account.refresh-token-reused' });
      assert.equal(reuse.actor_account_id, null, 'no one acted as the account');
      assert.equal(reuse.organization_id, personal);
      assert.equal(reuse.user_agent, UA);
      assert.deepEqual(reuse.details, { 'session-ended': true });
      const [ended] = await rows({ accountId: me.id, action: 'account.session-ended' });
      assert.deepEqual([ended.actor_account_id, ended.target_type, ended.target_id], [me.id, 'session', other.id]);
      assert.deepEqual(ended.details, { own: false });
    });

    it('records a refused log-in of an existing account (no actor), and nothing for an unknown email', async () => {
      const me = await account(t);
      const before = (await rows({ action: 'account.log-in-failed' })).length;
      assert.equal((await logIn(t.client, uniqueEmail('nobody'), 'wrong password')).status, 401);
      assert.equal((await logIn(t.client, me.email, 'wrong password')).status, 401);
      const [failed] = await eventually({ accountId: me.id, action: 'account.log-in-failed' }, 1);
      assert.ok(failed, 'the refused log-in is recorded once answered');
      assert.equal(failed.actor_account_id, null);
      assert.equal(failed.organization_id, await personalOrg(me.id));
      assert.deepEqual(failed.details, { reason: 'wrong-password' });
      assert.equal((await rows({ action: 'account.log-in-failed' })).length, before + 1, 'the unknown email left no entry');
    });

    it("records the password reset: the request (no actor) and the reset (the link's holder)", async () => {
      const me = await account(t);
      assert.equal((await t.client('POST', '/api/account/forgot-password', { body: { email: me.email } })).status, 202);
      const link = await mailedLink(t.system, me.email, 'reset-password');
      const [requested] = await eventually({ accountId: me.id, action: 'account.password-reset-requested' }, 1);
      assert.equal(requested.actor_account_id, null);
      assert.equal((await t.client('POST', '/api/account/reset-password', { body: { token: link.token, password: NEW_PASSWORD } })).status, 204);
      const [reset] = await rows({ accountId: me.id, action: 'account.password-reset' });
      assert.equal(reset.actor_account_id, me.id);
      assert.equal(reset.organization_id, await personalOrg(me.id));
    });

    it("records organization changes in the organization's log: the caller acts, the member or invitation is the target", async () => {
      const owner = await account(t);
      const bob = await account(t);
      const carol = await account(t);
      const org = await createOrg(t, owner, 'Audited Inc');
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Audited Ltd' })).status, 200);
      await addMember(t, org, owner, bob, 'member');
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}/members/${bob.id}`, { role: 'admin' })).status, 200);
      // the same role again changes nothing: no entry
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}/members/${bob.id}`, { role: 'admin' })).status, 200);
      const invited = await as(t, bob, 'POST', `/api/orgs/${org}/invitations`, { email: carol.email, role: 'member' });
      assert.equal(invited.status, 201);
      assert.equal((await as(t, bob, 'DELETE', `/api/orgs/${org}/invitations/${invited.body.id}`)).status, 204);
      await addMember(t, org, owner, carol, 'member');
      assert.equal((await as(t, bob, 'DELETE', `/api/orgs/${org}/members/${carol.id}`)).status, 204);
      assert.equal((await as(t, bob, 'DELETE', `/api/orgs/${org}/members/${bob.id}`)).status, 204);

      const entries = await rows({ organizationId: org });
      const summary = entries.map((e) => [
        e.action,
        e.actor_account_id,
        e.account_id,
        e.target_type,
        e.target_type === 'invitation' ? 'invitation' : e.target_id,
      ]);
      assert.deepEqual(summary, [
        ['org.created', owner.id, owner.id, 'organization', org],
        ['org.renamed', owner.id, owner.id, 'organization', org],
        ['org.invitation-sent', owner.id, owner.id, 'invitation', 'invitation'],
        ['org.invitation-accepted', bob.id, bob.id, 'invitation', 'invitation'],
        ['org.member-role-changed', owner.id, owner.id, 'account', bob.id],
        ['org.invitation-sent', bob.id, bob.id, 'invitation', 'invitation'],
        ['org.invitation-revoked', bob.id, bob.id, 'invitation', 'invitation'],
        ['org.invitation-sent', owner.id, owner.id, 'invitation', 'invitation'],
        ['org.invitation-accepted', carol.id, carol.id, 'invitation', 'invitation'],
        ['org.member-removed', bob.id, bob.id, 'account', carol.id],
        ['org.member-left', bob.id, bob.id, 'account', bob.id],
      ]);
      assert.deepEqual(entries[1].details, { name: 'Audited Ltd', slug: 'audited-inc', 'previous-name': 'Audited Inc', 'previous-slug': 'audited-inc' });
      assert.deepEqual(entries[2].details, { email: bob.email, role: 'member' });
      assert.deepEqual(entries[3].details, { role: 'member', joined: true });
      assert.deepEqual(entries[4].details, { role: 'admin', 'previous-role': 'member' });
      assert.equal(entries[6].target_id, invited.body.id);
      assert.deepEqual(entries[6].details, { email: carol.email, role: 'member' });
      assert.deepEqual(entries[9].details, { role: 'member' });
      assert.ok(entries.every((e) => e.ip === '127.0.0.1'));

      // the organization's log goes with it; the deletion is in the owner's personal log
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}`)).status, 204);
      assert.equal((await rows({ organizationId: org })).length, 0);
      const [deleted] = await rows({ accountId: owner.id, action: 'org.deleted' });
      assert.equal(deleted.organization_id, await personalOrg(owner.id));
      assert.deepEqual([deleted.actor_account_id, deleted.target_type, deleted.target_id], [owner.id, 'organization', org]);
      assert.deepEqual(deleted.details, { name: 'Audited Ltd', slug: 'audited-inc' });
    });

    it("keeps a deleted account's entries in shared organizations, without the person, and records the deletion there", async () => {
      const owner = await account(t);
      const leaver = await account(t);
      const org = await createOrg(t, owner, 'Survivors');
      await addMember(t, org, owner, leaver, 'admin');
      const soleOrg = await createOrg(t, leaver, 'Alone');
      const personal = await personalOrg(leaver.id);
      assert.ok((await rows({ organizationId: personal })).length > 0);

      assert.equal((await as(t, leaver, 'POST', '/api/account/delete', { password: PASSWORD })).status, 204);
      assert.equal((await rows({ organizationId: personal })).length, 0, 'the personal log went with the account');
      assert.equal((await rows({ organizationId: soleOrg })).length, 0, 'so did the log of the organization it alone owned');
      const entries = await rows({ organizationId: org });
      const accepted = entries.find((e) => e.action === 'org.invitation-accepted')!;
      assert.deepEqual([accepted.actor_account_id, accepted.account_id], [null, null], 'the entry stays, without the person');
      const deleted = entries.at(-1)!;
      assert.equal(deleted.action, 'account.deleted');
      assert.deepEqual([deleted.actor_account_id, deleted.account_id, deleted.target_type, deleted.target_id], [null, null, 'account', leaver.id]);
      assert.deepEqual([deleted.ip, deleted.user_agent], [null, null], 'no address of the person is kept');
      assert.deepEqual(deleted.details, { role: 'admin' });
    });

    it('commits an entry with its change only: a change rolled back at commit leaves no entry, an entry refused takes its change with it', async () => {
      const kysely = t.system.database.db;
      const owner = await account(t);
      const member = await account(t);
      const org = await createOrg(t, owner, 'Atomic');
      await addMember(t, org, owner, member, 'member');
      await sql`create function test_refuse_at_commit() returns trigger language plpgsql as $$
        begin raise exception 'refused at commit'; end $$`.execute(kysely);
      await sql`create constraint trigger test_refuse_name after update on organization deferrable initially deferred
        for each row when (new.name = 'Refused at commit') execute function test_refuse_at_commit()`.execute(kysely);
      await sql`create function test_refuse_removal_entry() returns trigger language plpgsql as $$
        begin raise exception 'entry refused'; end $$`.execute(kysely);
      await sql`create trigger test_refuse_removal_entry before insert on audit_entry
        for each row when (new.action = 'org.member-removed') execute function test_refuse_removal_entry()`.execute(kysely);
      try {
        const renamed = await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Refused at commit' });
        assert.equal(renamed.status, 500);
        assert.equal((await as(t, owner, 'GET', `/api/orgs/${org}`)).body.name, 'Atomic');
        assert.equal((await rows({ organizationId: org, action: 'org.renamed' })).length, 0, 'the rolled-back rename left no entry');

        const removed = await as(t, owner, 'DELETE', `/api/orgs/${org}/members/${member.id}`);
        assert.equal(removed.status, 500);
        const members = (await as(t, owner, 'GET', `/api/orgs/${org}/members`)).body.members as Array<{ 'account-id': string }>;
        assert.ok(
          members.some((m) => m['account-id'] === member.id),
          'the member stays when its removal cannot be recorded',
        );
      } finally {
        await sql`drop trigger test_refuse_removal_entry on audit_entry`.execute(kysely);
        await sql`drop function test_refuse_removal_entry()`.execute(kysely);
        await sql`drop trigger test_refuse_name on organization`.execute(kysely);
        await sql`drop function test_refuse_at_commit()`.execute(kysely);
      }
    });

    it('names every action it writes in the readable table, and keeps secrets out of every entry', async () => {
      const all = await t.system.database.db.selectFrom('audit_entry').select(['action', 'details']).execute();
      for (const action of new Set(all.map((e) => e.action))) assert.ok(AUDIT_ACTION_LABELS[action], `${action} has a readable name`);
      const text = JSON.stringify(all);
      for (const secret of [PASSWORD, NEW_PASSWORD]) assert.ok(!text.includes(secret), 'no password');
      for (const e of all) {
        for (const key of Object.keys(e.details)) assert.doesNotMatch(key, /password|token|secret|key|link/i, `${e.action} details: ${key}`);
        for (const value of Object.values(e.details)) assert.doesNotMatch(String(value), /token=|^[A-Za-z0-9_-]{43}$/, `${e.action}: a token-like value`);
      }
    });
  });
}
