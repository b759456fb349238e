/**
 * The operator's console over HTTP (issue 29): finding accounts by email or name prefix a page at
 * a time without duplicates, an account's detail, locking (every session ends, every sign-in
 * answers 403 `account-locked`) and unlocking, organizations, the numbers, the admin audit log.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accountModule } from '../../src/account/module.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { logIn, PASSWORD, signUp, signUpVerified } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { adminAddresses } from './support.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const db of testDatabases()) {
  describe(`Admin accounts and organizations on ${db.name}`, () => {
    let t: TestSystem;
    let admin: TestAccount;
    const addresses = adminAddresses();

    before(async () => {
      t = await startSystem(db, { ...addresses.env, REFRESH_REUSE_GRACE: '0' });
      admin = await account(t, { email: addresses.verified });
    });
    after(async () => t?.stop());

    /** Every page of a search with `limit`, following next-cursor; fails on a repeated id. */
    const allPages = async (path: string, key: 'accounts' | 'organizations', limit: number) => {
      const seen: Array<Record<string, any>> = [];
      let cursor: string | null = null;
      for (let page = 0; page < 200; page++) {
        const sep = path.includes('?') ? '&' : '?';
        const res = await as(t, admin, 'GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body[key].length <= limit);
        seen.push(...res.body[key]);
        cursor = res.body['next-cursor'];
        if (!cursor) break;
        assert.ok(res.body[key].length > 0 || page === 0, 'a page that is not the last is not empty');
      }
      const ids = seen.map((a) => a.id);
      assert.equal(new Set(ids).size, ids.length, 'no row twice');
      return seen;
    };

    it('finds accounts by email prefix, then by name prefix, page after page without duplicates', async () => {
      const tag = `zq${randomBytes(3).toString('hex')}`;
      const byEmail: string[] = [];
      for (let i = 0; i < 7; i++) byEmail.push((await signUp(t.client, `${tag}-${i}@example.com`)).id);
      const byName: string[] = [];
      for (const name of [`${tag.toUpperCase()} Delta`, `${tag} alpha`, `${tag} Charlie`, `${tag} bravo`]) {
        const res = await t.client('POST', '/api/account/sign-up', {
          body: { email: `n-${randomBytes(4).toString('hex')}@example.com`, password: PASSWORD, name },
        });
        assert.equal(res.status, 201);
        byName.push(res.body.account.id);
      }
      // matching both ways: found once, among the email matches
      const both = await t.client('POST', '/api/account/sign-up', { body: { email: `${tag}-both@example.com`, password: PASSWORD, name: `${tag} both` } });
      for (const limit of [1, 3, 5, 12, 100]) {
        const found = await allPages(`/api/admin/accounts?q=${tag.toUpperCase()}`, 'accounts', limit);
        const ids = found.map((a) => a.id);
        assert.equal(ids.length, 12, `limit ${limit}`);
        assert.deepEqual(ids.slice(0, 8).sort(), [...byEmail, both.body.account.id].sort(), 'the email matches first');
        assert.deepEqual(
          found.slice(0, 8).map((a) => a.email),
          found
            .slice(0, 8)
            .map((a) => a.email)
            .sort(),
          'by email',
        );
        assert.deepEqual(
          found.slice(8).map((a) => a.name),
          [`${tag} alpha`, `${tag} bravo`, `${tag} Charlie`, `${tag.toUpperCase()} Delta`],
          'then by name, case-insensitively',
        );
      }
      const one = (await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}-3@`)).body;
      assert.deepEqual(
        one.accounts.map((a: { id: string }) => a.id),
        [byEmail[3]],
      );
      assert.equal(one['next-cursor'], null);
      assert.deepEqual(Object.keys(one.accounts[0]).sort(), [
        'created-at',
        'email',
        'email-verified',
        'id',
        'last-seen-at',
        'locked',
        'name',
        'two-factor-enabled',
      ]);
      assert.equal(one.accounts[0]['last-seen-at'], null, 'never logged in');
      assert.deepEqual((await as(t, admin, 'GET', '/api/admin/accounts?q=%25')).body.accounts, [], 'a LIKE wildcard is a character like any other');
      assert.deepEqual((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}_`)).body.accounts, []);
    });

    it('finds accounts by the start of a later word of the name, after the email and name matches, once each', async () => {
      const tag = `zq${randomBytes(3).toString('hex')}`;
      const named = async (name: string, email = `w-${randomBytes(4).toString('hex')}@example.com`) => {
        const res = await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD, name } });
        assert.equal(res.status, 201, res.text);
        return res.body.account.id as string;
      };
      const surname = await named(`Quasar ${tag.toUpperCase()}12`);
      const hyphenated = await named(`Jean-${tag}luc Picard`);
      const twice = await named(`Ann ${tag}a ${tag}b`);
      const third = await named(`Mary Ann ${tag}-Smith`);
      const first = await named(`${tag} Firstname`);
      const byEmail = await named('Someone Else', `${tag}@example.com`);
      const ids = (found: Array<Record<string, any>>) => found.map((a) => a.id as string);

      // the issue's example: a surname
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}12`)).body.accounts), [surname]);
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag.toUpperCase()}1`)).body.accounts), [surname], 'any case');
      // the rest of the name from that word on
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}luc%20pic`)).body.accounts), [hyphenated]);
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=picard%20x${tag}`)).body.accounts), [], 'not past the end');
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag.slice(2)}12`)).body.accounts), [], 'the start of a word, not its middle');

      for (const limit of [1, 2, 100]) {
        const found = await allPages(`/api/admin/accounts?q=${tag}`, 'accounts', limit);
        assert.deepEqual(
          ids(found),
          [byEmail, first, third, surname, twice, hyphenated],
          `limit ${limit}: email, then the name's start, then a later word in the order of the rest of the name (an account once)`,
        );
      }

      // a renamed account is found by its new words only
      const renamed = await account(t);
      assert.equal((await as(t, renamed, 'PATCH', '/api/account/me', { name: `Old ${tag}old` })).status, 200);
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}old`)).body.accounts), [renamed.id]);
      assert.equal((await as(t, renamed, 'PATCH', '/api/account/me', { name: `New ${tag}new` })).status, 200);
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}old`)).body.accounts), []);
      assert.deepEqual(ids((await as(t, admin, 'GET', `/api/admin/accounts?q=${tag}new`)).body.accounts), [renamed.id]);
    });

    it('lists every account newest first without a query, page after page', async () => {
      const found = await allPages('/api/admin/accounts', 'accounts', 4);
      const rows = await t.system.database.db.selectFrom('account').select(['id', 'created_at']).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      assert.deepEqual(
        found.map((a) => a.id),
        rows.map((r) => r.id),
      );
    });

    it('refuses a cursor it did not issue, and a limit out of range, with 400', async () => {
      for (const cursor of [
        'nope',
        Buffer.from('{"p":"x"}').toString('base64url'),
        Buffer.from('{"p":"n","k":"a"}').toString('base64url'),
        Buffer.from('{"p":"c","k":"2020-01-01","i":"not-a-uuid"}').toString('base64url'),
        Buffer.from('[1]').toString('base64url'),
      ]) {
        const res = await as(t, admin, 'GET', `/api/admin/accounts?q=a&cursor=${cursor}`);
        assert.equal(res.status, 400, cursor);
        assert.equal(res.body.type, 'request-coercion');
        assert.equal(res.body.errors[0].path, '/cursor');
      }
      for (const limit of ['0', '101', 'many']) assert.equal((await as(t, admin, 'GET', `/api/admin/accounts?limit=${limit}`)).status, 400);
      assert.equal((await as(t, admin, 'GET', `/api/admin/accounts?q=${'a'.repeat(255)}`)).status, 400);
      assert.equal((await as(t, admin, 'GET', '/api/admin/accounts?sort=email')).status, 400, 'an unknown parameter');
    });

    it('shows an account with its organizations and roles, sessions and identities; 404 for an unknown id', async () => {
      const owner = await account(t);
      const member = await account(t);
      const orgId = await createOrg(t, owner, 'Detail Org');
      await addMember(t, orgId, owner, member, 'admin');
      const res = await as(t, admin, 'GET', `/api/admin/accounts/${member.id}`);
      assert.equal(res.status, 200, res.text);
      const detail = res.body;
      assert.equal(detail.email, member.email);
      assert.equal(detail['platform-admin'], false);
      assert.equal(detail.locked, false);
      assert.equal(detail['locked-at'], null);
      assert.equal(detail['session-count'], 1);
      assert.deepEqual(detail.identities, []);
      assert.equal(detail.organizations.length, 2);
      assert.equal(detail.organizations[0].personal, true);
      assert.equal(detail.organizations[0].role, 'owner');
      assert.deepEqual(detail.organizations[1], {
        id: orgId,
        name: 'Detail Org',
        slug: detail.organizations[1].slug,
        personal: false,
        role: 'admin',
        subscription: { status: 'none', plan: null },
      });
      assert.ok(detail['last-seen-at'], 'logged in');
      assert.equal((await as(t, admin, 'GET', `/api/admin/accounts/${admin.id}`)).body['platform-admin'], true);
      const unknown = await as(t, admin, 'GET', '/api/admin/accounts/00000000-0000-4000-8000-000000000000');
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.body, { type: 'not-found', message: 'No such account' });
      assert.equal((await as(t, admin, 'POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/lock', { reason: 'x' })).status, 404);
      assert.equal((await as(t, admin, 'POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/unlock', {})).status, 404);
      assert.equal((await as(t, admin, 'GET', '/api/admin/accounts/not-a-uuid')).status, 400);
    });

    it('locks an account: its sessions end, every sign-in answers 403 account-locked; unlocking restores sign-in, not the sessions', async () => {
      const { email, id } = await signUp(t.client);
      const one = (await logIn(t.client, email)).body;
      const two = (await logIn(t.client, email)).body;
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(one['access-token']) })).status, 200);

      const missing = await as(t, admin, 'POST', `/api/admin/accounts/${id}/lock`, {});
      assert.equal(missing.status, 400);
      assert.equal(missing.body.errors[0].path, '/reason');
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${id}/lock`, { reason: '' })).status, 400);
      const self = await as(t, admin, 'POST', `/api/admin/accounts/${admin.id}/lock`, { reason: 'oops' });
      assert.equal(self.status, 403);
      assert.equal(self.body.reason, 'self');

      const locked = await as(t, admin, 'POST', `/api/admin/accounts/${id}/lock`, { reason: 'chargeback fraud' });
      assert.equal(locked.status, 200, locked.text);
      assert.equal(locked.body.locked, true);
      assert.equal(locked.body['locked-reason'], 'chargeback fraud');
      assert.ok(locked.body['locked-at']);
      assert.equal(locked.body['session-count'], 0);
      for (const s of [one, two]) {
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(s['access-token']) })).status, 401, 'its access tokens are refused');
        const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': s['refresh-token'] } });
        assert.equal(refreshed.status, 403);
        assert.equal(refreshed.body.type, 'account-locked');
      }
      const refused = await logIn(t.client, email);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.body, { type: 'account-locked', message: 'This account is locked; contact support' });
      assert.equal((await logIn(t.client, email, 'a wrong password')).status, 401, 'a wrong password says nothing of the lock');
      const again = await as(t, admin, 'POST', `/api/admin/accounts/${id}/lock`, { reason: 'twice' });
      assert.equal(again.status, 409);
      const found = (await as(t, admin, 'GET', `/api/admin/accounts?q=${encodeURIComponent(email)}`)).body.accounts;
      assert.equal(found[0].locked, true);

      const unlocked = await as(t, admin, 'POST', `/api/admin/accounts/${id}/unlock`, { reason: 'refund confirmed' });
      assert.equal(unlocked.status, 200, unlocked.text);
      assert.equal(unlocked.body.locked, false);
      assert.equal(unlocked.body['locked-reason'], null);
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${id}/unlock`, {})).status, 409);
      assert.equal((await logIn(t.client, email)).status, 200, 'sign-in works again');
      assert.equal(
        (await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': one['refresh-token'] } })).status,
        401,
        'ended sessions stay ended',
      );

      const log = (await as(t, admin, 'GET', `/api/admin/audit-log?account-id=${id}`)).body.entries;
      assert.deepEqual(
        log.map((e: { action: string }) => e.action),
        ['admin.account-unlocked', 'admin.account-locked'],
      );
      assert.deepEqual(log[1].actor, { 'account-id': admin.id, email: admin.email, 'api-key-id': null });
      assert.deepEqual(log[1].target, { type: 'account', id, email });
      assert.deepEqual(log[1].details, { reason: 'chargeback fraud' });
      assert.deepEqual(log[0].details, { reason: 'refund confirmed' });
    });

    it('refuses to lock another platform admin', async () => {
      const other = adminAddresses();
      const t2 = await startSystem(db, { ADMIN_EMAILS: `${addresses.verified},${other.verified}` });
      try {
        const a = await account(t2, { email: addresses.verified });
        const b = await account(t2, { email: other.verified });
        const res = await as(t2, a, 'POST', `/api/admin/accounts/${b.id}/lock`, { reason: 'coup' });
        assert.equal(res.status, 403);
        assert.equal(res.body.reason, 'platform-admin');
      } finally {
        await t2.stop();
      }
    });

    it('refuses a sign-in begun before the lock at its second step, and a provider sign-in at the session start', async () => {
      // two-factor is a lasting credential: only a verified address may add it
      const { email, id } = await signUpVerified(t);
      const access = (await logIn(t.client, email)).body['access-token'] as string;
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      await awayFromStepEdge();
      const enabled = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(access),
        body: { code: totpCode(setup.body.secret, -1), password: PASSWORD },
      });
      assert.equal(enabled.status, 200, enabled.text);
      const pending = await logIn(t.client, email);
      assert.equal(pending.body['mfa-required'], true);
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${id}/lock`, { reason: 'abuse' })).status, 200);
      const second = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': pending.body['mfa-token'], code: totpCode(setup.body.secret) } });
      assert.equal(second.status, 403, second.text);
      assert.equal(second.body.type, 'account-locked');
      const locked = await logIn(t.client, email);
      assert.equal(locked.status, 403, 'refused before the second factor is asked');
      // a provider's callback (src/oidc/) starts its session through the same place
      const other = await signUp(t.client);
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${other.id}/lock`, { reason: 'abuse' })).status, 200);
      const accounts = t.system.services(accountModule).accounts;
      await assert.rejects(
        accounts.firstFactorPassed(other.id, 'provider', { ip: '127.0.0.1', userAgent: null }, { method: 'oidc' }),
        (err: { status?: number; body?: { type: string } }) => err.status === 403 && err.body?.type === 'account-locked',
      );
    });

    it('finds organizations by name or slug prefix with member counts and subscriptions, page after page', async () => {
      const owner = await account(t);
      const member = await account(t);
      const tag = `Qx${randomBytes(3).toString('hex')}`;
      const ids: string[] = [];
      for (const n of ['b', 'a', 'c']) ids.push(await createOrg(t, owner, `${tag} ${n}`));
      await addMember(t, ids[0], owner, member, 'member');
      const found = await allPages(`/api/admin/orgs?q=${tag.toLowerCase()}`, 'organizations', 2);
      assert.deepEqual(
        found.map((o) => o.name),
        [`${tag} a`, `${tag} b`, `${tag} c`],
      );
      assert.deepEqual(
        found.map((o) => o['member-count']),
        [1, 2, 1],
      );
      assert.deepEqual(found[0].subscription, { status: 'none', plan: null, 'current-period-end': null, 'cancel-at-period-end': false });
      const bySlug = (await as(t, admin, 'GET', `/api/admin/orgs?q=${found[1].slug}`)).body.organizations;
      assert.deepEqual(
        bySlug.map((o: { id: string }) => o.id),
        [ids[0]],
      );
      const every = await allPages('/api/admin/orgs', 'organizations', 5);
      const count = await t.system.database.db
        .selectFrom('organization')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(every.length, Number(count.n));
    });

    it('counts accounts, verified ones, organizations, live subscriptions per plan, and recent sign-ups', async () => {
      const dbh = t.system.database.db;
      const orgId = await createOrg(t, admin, 'Paying');
      await dbh.updateTable('organization').set({ subscription_status: 'active', subscription_plan: 'price_pro' }).where('id', '=', orgId).execute();
      const stats = (await as(t, admin, 'GET', '/api/admin/stats')).body;
      const count = async (q: any) => Number((await q.select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(stats.accounts, await count(dbh.selectFrom('account')));
      assert.equal(stats['verified-accounts'], await count(dbh.selectFrom('account').where('email_verified', '=', true)));
      assert.equal(stats.organizations, await count(dbh.selectFrom('organization')));
      assert.deepEqual(stats.subscriptions, { price_pro: 1 });
      assert.equal(stats['sign-ups-7d'], stats.accounts, 'every account here is new');
      assert.equal(stats['sign-ups-30d'], stats.accounts);
      assert.ok(stats['verified-accounts'] < stats.accounts);
    });

    it('pages the admin audit log and refuses a foreign cursor', async () => {
      const first = (await as(t, admin, 'GET', '/api/admin/audit-log?limit=1')).body;
      assert.equal(first.entries.length, 1);
      assert.ok(first['next-cursor']);
      const second = (await as(t, admin, 'GET', `/api/admin/audit-log?limit=1&cursor=${first['next-cursor']}`)).body;
      assert.ok(BigInt(second.entries[0].id) < BigInt(first.entries[0].id));
      assert.equal((await as(t, admin, 'GET', '/api/admin/audit-log?cursor=bad')).status, 400);
      const all = (await as(t, admin, 'GET', '/api/admin/audit-log?limit=100')).body.entries as Array<{ action: string }>;
      assert.ok(
        all.every((e) => e.action.startsWith('admin.') || 'impersonated' in e),
        'admin actions and impersonated changes only',
      );
    });
  });
}
