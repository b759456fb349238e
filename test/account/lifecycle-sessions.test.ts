/** Sessions, export and deletion (issue 17, "The account routes"). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cookiesOf, logIn, PASSWORD, signUp } from '../support/auth.js';
import { ALL_FORMATS } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const db of testDatabases()) {
  describe(`Sessions, export and deletion on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { REFRESH_REUSE_GRACE: '0' });
    });
    after(async () => t?.stop());

    const session = async (email: string, userAgent = 'test-agent/1.0') => {
      const res = await t.client('POST', '/api/account/log-in', { headers: { 'user-agent': userAgent }, body: { email, password: PASSWORD } });
      assert.equal(res.status, 200, res.text);
      return { access: res.body['access-token'] as string, refresh: res.body['refresh-token'] as string, res };
    };

    for (const format of ALL_FORMATS) {
      it(`lists the live sessions and ends one, in ${format.name}`, async () => {
        const { email } = await signUp(t.client);
        const laptop = await session(email, 'Laptop Browser');
        const phone = await session(email, `Phone ${'x'.repeat(400)}`);
        const ended = await session(email, 'Logged out');
        await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': ended.refresh } });

        const listed = await t.client('GET', '/api/account/sessions', { format, headers: bearer(laptop.access) });
        assert.equal(listed.status, 200, listed.text);
        assert.equal(listed.headers['content-type'], format.mime);
        const sessions = listed.body.sessions as Array<Record<string, unknown>>;
        assert.equal(sessions.length, 2, 'live families only');
        const mine = sessions.find((s) => s.current === true)!;
        const other = sessions.find((s) => s.current === false)!;
        assert.equal(mine['user-agent'], 'Laptop Browser');
        assert.equal((other['user-agent'] as string).length, 256, 'user agents are truncated');
        assert.equal(mine.ip, '127.0.0.1');
        for (const s of sessions) assert.ok(Date.parse(s['created-at'] as string) <= Date.parse(s['last-used-at'] as string));

        // a refresh moves last-used-at
        const before = sessions.find((s) => s.current === false)!['last-used-at'] as string;
        await new Promise((r) => setTimeout(r, 20));
        assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': phone.refresh } })).status, 200);
        const again = (await t.client('GET', '/api/account/sessions', { headers: bearer(laptop.access) })).body.sessions as Array<Record<string, string>>;
        assert.ok(Date.parse(again.find((s) => s.id === other.id)!['last-used-at']) > Date.parse(before));

        const end = await t.client('DELETE', `/api/account/sessions/${other.id as string}`, { format, headers: bearer(laptop.access) });
        assert.equal(end.status, 204, end.text);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(phone.access) })).status, 401, 'its access tokens die');
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(laptop.access) })).status, 200);
        const left = (await t.client('GET', '/api/account/sessions', { headers: bearer(laptop.access) })).body.sessions;
        assert.deepEqual(
          left.map((s: { id: string }) => s.id),
          [mine.id],
        );
        const twice = await t.client('DELETE', `/api/account/sessions/${other.id as string}`, { format, headers: bearer(laptop.access) });
        assert.deepEqual([twice.status, twice.body.type], [404, 'not-found']);
      });
    }

    it("answers 404 for another account's session and leaves it alive", async () => {
      const alice = await signUp(t.client);
      const bob = await signUp(t.client);
      const a = await session(alice.email);
      const b = await session(bob.email);
      const bobsId = JSON.parse(Buffer.from(b.access.split('.')[1], 'base64url').toString()).sid as string;
      const res = await t.client('DELETE', `/api/account/sessions/${bobsId}`, { headers: bearer(a.access) });
      assert.deepEqual([res.status, res.body.type], [404, 'not-found']);
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(b.access) })).status, 200);
      for (const id of ['not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
        assert.equal((await t.client('DELETE', `/api/account/sessions/${id}`, { headers: bearer(a.access) })).status, 404);
      }
      assert.equal((await t.client('GET', '/api/account/sessions')).status, 401);
      assert.equal((await t.client('DELETE', `/api/account/sessions/${bobsId}`)).status, 401);
    });

    for (const format of ALL_FORMATS) {
      it(`exports the account, its sessions and its payment events, in ${format.name}`, async () => {
        const { email, id } = await signUp(t.client);
        const { access } = await session(email);
        await t.system.database.db
          .insertInto('payment_event')
          .values({
            provider: 'stripe',
            event_id: `evt_${id.slice(0, 8)}`,
            type: 'invoice.paid',
            account_id: id,
            customer_id: 'cus_1',
            payload: JSON.stringify({ id: `evt_${id.slice(0, 8)}`, type: 'invoice.paid', amount: 1200 }),
            created_at: new Date(),
          })
          .execute();
        const res = await t.client('GET', '/api/account/export', { format, headers: bearer(access) });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.account.id, id);
        assert.equal(res.body.account.email, email);
        assert.equal(res.body.sessions.length, 1);
        assert.equal(res.body.sessions[0].current, true);
        assert.equal(res.body['payment-events'].length, 1);
        assert.equal(res.body['payment-events'][0].type, 'invoice.paid');
        assert.equal(res.body['payment-events'][0].payload.amount, 1200);
        // the audit log names password events (`account.password-changed`, a log-in's `method`): the check is for the values
        assert.ok(!res.text.includes(PASSWORD) && !res.text.includes('$argon2') && !/password[-_]?hash/i.test(res.text), 'no hash or secret');
        assert.deepEqual(
          res.body['audit-log'].map((e: { action: string }) => e.action),
          ['account.logged-in', 'account.signed-up'],
        );
        assert.equal((await t.client('GET', '/api/account/export', { format })).status, 401);
      });
    }

    for (const format of ALL_FORMATS) {
      it(`deletes the account: gone, tokens dead, payment events unlinked, cookie cleared, in ${format.name}`, async () => {
        const { email, id } = await signUp(t.client);
        const first = await session(email);
        const second = await session(email);
        await t.system.database.db
          .insertInto('payment_event')
          .values({
            provider: 'stripe',
            event_id: `evt_del_${id}`,
            type: 'invoice.paid',
            account_id: id,
            customer_id: 'cus_2',
            payload: '{}',
            created_at: new Date(),
          })
          .execute();
        const wrong = await t.client('POST', '/api/account/delete', { format, headers: bearer(first.access), body: { password: 'wrong password' } });
        assert.deepEqual([wrong.status, wrong.body.type], [403, 'forbidden']);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(first.access) })).status, 200, 'nothing happened');
        const none = await t.client('POST', '/api/account/delete', { format, headers: bearer(first.access), body: {} });
        assert.deepEqual([none.status, none.body.type], [403, 'reauthentication-required'], 'no password: the re-authentication is asked for');

        const deleted = await t.client('POST', '/api/account/delete', { format, headers: bearer(first.access), body: { password: PASSWORD } });
        assert.equal(deleted.status, 204, deleted.text);
        const cleared = cookiesOf(deleted)['refresh-token'];
        assert.ok(cleared, 'the refresh cookie is cleared');
        assert.equal(cleared.value, '');
        assert.match(cleared.attributes, /Expires=Thu, 01 Jan 1970/i);

        for (const s of [first, second]) {
          assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(s.access) })).status, 401);
          assert.equal((await t.client('GET', '/api/account/sessions', { headers: bearer(s.access) })).status, 401);
          assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': s.refresh } })).status, 401);
        }
        assert.equal((await logIn(t.client, email)).status, 401, "can't log in");

        const dbh = t.system.database.db;
        assert.equal((await dbh.selectFrom('account').select('id').where('id', '=', id).execute()).length, 0);
        assert.equal((await dbh.selectFrom('action_token').select('id').where('account_id', '=', id).execute()).length, 0);
        assert.equal((await dbh.selectFrom('refresh_family').select('id').where('account_id', '=', id).execute()).length, 0);
        const families = await dbh.selectFrom('refresh_family').select(['id', 'user_agent', 'ip', 'revoked_at']).where('account_id', 'is', null).execute();
        const sids = [first, second].map((s) => JSON.parse(Buffer.from(s.access.split('.')[1], 'base64url').toString()).sid as string);
        for (const sid of sids) {
          const family = families.find((f) => f.id === sid);
          assert.ok(family?.revoked_at, 'the revoked family stays, unlinked, so restarted instances keep refusing its tokens');
          assert.deepEqual([family.user_agent, family.ip], [null, null]);
        }
        assert.equal((await dbh.selectFrom('refresh_token').select('id').where('family_id', 'in', sids).execute()).length, 0);
        assert.equal((await dbh.selectFrom('mail_outbox').select('id').where('to_address', '=', email).execute()).length, 0);
        const event = await dbh
          .selectFrom('payment_event')
          .select(['account_id', 'customer_id'])
          .where('event_id', '=', `evt_del_${id}`)
          .executeTakeFirstOrThrow();
        assert.deepEqual(event, { account_id: null, customer_id: 'cus_2' }, 'payment events stay, unlinked');

        // the address is free again
        assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD } })).status, 201);
      });
    }

    it('counts wrong deletion passwords like failed log-ins', async () => {
      const limited = await startSystem(db, { LOGIN_LIMIT_EMAIL: '2/900' });
      try {
        const { email } = await signUp(limited.client);
        const access = (await logIn(limited.client, email)).body['access-token'];
        for (const guess of ['guess one', 'guess two']) {
          assert.equal((await limited.client('POST', '/api/account/delete', { headers: bearer(access), body: { password: guess } })).status, 403);
        }
        assert.equal((await limited.client('POST', '/api/account/delete', { headers: bearer(access), body: { password: PASSWORD } })).status, 429);
        assert.equal((await limited.client('GET', '/api/account/me', { headers: bearer(access) })).status, 200);
      } finally {
        await limited.stop();
      }
    });

    it('documents every lifecycle route in the OpenAPI document with named schemas', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      const expected: Array<[string, string]> = [
        ['post', '/api/account/verify-email'],
        ['post', '/api/account/resend-verification'],
        ['post', '/api/account/forgot-password'],
        ['post', '/api/account/reset-password'],
        ['post', '/api/account/change-password'],
        ['post', '/api/account/change-email'],
        ['post', '/api/account/confirm-email'],
        ['patch', '/api/account/me'],
        ['get', '/api/account/sessions'],
        ['delete', '/api/account/sessions/{id}'],
        ['get', '/api/account/export'],
        ['post', '/api/account/delete'],
      ];
      for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
      for (const name of ['token-request', 'reset-password', 'change-password', 'change-email', 'account-sessions', 'account-export', 'accepted']) {
        assert.ok(doc.components.schemas[name], name);
      }
      assert.ok(doc.components.schemas['user-account'].properties['email-verified']);
    });
  });
}
