/**
 * Who reaches the admin API (issue 29): platform admins are the accounts whose verified email is
 * in ADMIN_EMAILS (`platform-admin` on the account says so); everyone else, with or without a
 * token, whatever the body or headers, gets exactly what a path without a route gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { adminModule } from '../../src/admin/module.js';
import { ConfigError } from '../../src/runtime/settings.js';
import { account, as, type TestAccount } from '../orgs/support.js';
import { browserSession } from '../support/auth.js';
import { FORMAT_BY_NAME, type TestResponse } from '../support/http.js';
import { settingsOf } from '../support/settings.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';
import { adminAddresses, claimsOf, impersonate } from './support.js';

const ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/api/admin/accounts?q=a&limit=5'],
  ['GET', '/api/admin/accounts/00000000-0000-4000-8000-000000000000'],
  ['POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/lock', { reason: 'x' }],
  ['POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/unlock', {}],
  ['POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/impersonate', { reason: 'x' }],
  ['POST', '/api/admin/impersonation/stop', {}],
  ['GET', '/api/admin/orgs'],
  ['GET', '/api/admin/stats'],
  ['GET', '/api/admin/audit-log'],
];

/** What may differ between two answers to different requests: the date, the body's length (the path is in the message). */
const comparable = (res: TestResponse) => {
  const { date: _date, 'content-length': _length, ...rest } = res.headers;
  return rest;
};

for (const db of testDatabases()) {
  describe(`The admin gate on ${db.name}`, () => {
    let t: TestSystem;
    let admin: TestAccount;
    let unverifiedAdmin: TestAccount;
    let user: TestAccount;
    const addresses = adminAddresses();

    before(async () => {
      t = await startSystem(db, addresses.env);
      admin = await account(t, { email: addresses.verified });
      unverifiedAdmin = await account(t, { email: addresses.unverified, verified: false });
      user = await account(t);
    });
    after(async () => t?.stop());

    /** The answer for the same request to a path that has no route. */
    const unknown = (method: string, path: string, init: Parameters<TestSystem['client']>[2]) =>
      t.client(method, path.replace('/api/admin/', '/api/no-such-area/'), init);

    it('says who is a platform admin on the account: a verified address in ADMIN_EMAILS, nobody else', async () => {
      assert.equal((await as(t, admin, 'GET', '/api/account/me')).body['platform-admin'], true);
      assert.equal((await as(t, unverifiedAdmin, 'GET', '/api/account/me')).body['platform-admin'], false);
      const me = await as(t, user, 'GET', '/api/account/me');
      assert.equal(me.body['platform-admin'], false);
      assert.equal('impersonated-by' in me.body, false, 'only an impersonated session has impersonated-by');
      const query = await as(t, admin, 'POST', '/api/cqrs/query', { 'query/kind': 'account/me' });
      assert.equal(query.body['platform-admin'], true);
    });

    it('answers every admin route with the unknown-route 404 for anyone who is not a platform admin', async () => {
      const forged = await new SignJWT({ email: user.email, sid: '00000000-0000-4000-8000-000000000000' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user.id)
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti('x')
        .setIssuer('saas-app')
        .setAudience('saas-app')
        .sign(new TextEncoder().encode('another-secret-0123456789abcdefghijklmnop'));
      const callers: Array<[string, Record<string, string>]> = [
        ['nobody', {}],
        ['an account', { authorization: `Bearer ${user.token}` }],
        ['an admin address not verified', { authorization: `Bearer ${unverifiedAdmin.token}` }],
        ['a forged token', { authorization: `Bearer ${forged}` }],
        ['an API key', { authorization: 'Bearer sk_abcdefgh_0123456789abcdefghijklmnopqrstuvwxyzAB' }],
        ['a cross-site request', { authorization: `Bearer ${user.token}`, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }],
      ];
      for (const [who, headers] of callers) {
        for (const [method, path, body] of ROUTES) {
          const init = { headers, body };
          const res = await t.client(method, path, init);
          const expected = await unknown(method, path, init);
          // a cross-site unsafe request is refused (403) before any route matters, a path without one included
          const crossSite = headers['sec-fetch-site'] === 'cross-site' && method !== 'GET';
          assert.equal(expected.status, crossSite ? 403 : 404, `${method} ${path}: the unknown route's answer`);
          assert.equal(res.status, expected.status, `${who}: ${method} ${path} => ${res.status} ${res.text}`);
          assert.deepEqual(
            res.body,
            crossSite ? expected.body : { type: 'not-found', message: `No route for ${method} ${path.split('?')[0]}` },
            `${who}: ${method} ${path}`,
          );
          assert.deepEqual(comparable(res), comparable(expected), `${who}: ${method} ${path}: the same headers`);
        }
      }
    });

    it('gives no other answer first: a body that does not parse, of another type, too large, or without the CSRF token', async () => {
      const path = '/api/admin/accounts/00000000-0000-4000-8000-000000000000/lock';
      const { cookie } = await browserSession(t.client);
      const variants: Array<[string, Parameters<TestSystem['client']>[2]]> = [
        ['malformed JSON', { headers: { authorization: `Bearer ${user.token}` }, body: '{"reason":' }],
        ['text/plain', { headers: { authorization: `Bearer ${user.token}`, 'content-type': 'text/plain' }, body: 'hello' }],
        ['a missing reason', { headers: { authorization: `Bearer ${user.token}` }, body: {} }],
        ['a cookie without the CSRF token', { headers: { cookie }, body: { reason: 'x' } }],
        ['a body over the limit', { headers: { authorization: `Bearer ${user.token}` }, body: { reason: 'x'.repeat(20_000) } }],
        ['a path id that is not a uuid', { headers: { authorization: `Bearer ${user.token}` }, body: { reason: 'x' } }],
      ];
      for (const [what, init] of variants) {
        const target = what.includes('uuid') ? '/api/admin/accounts/not-a-uuid/lock' : path;
        const res = await t.client('POST', target, init);
        assert.equal(res.status, 404, `${what}: ${res.text}`);
        assert.equal(res.body.type, 'not-found', what);
        const expected = await unknown('POST', target, init);
        assert.equal(expected.status, 404, `${what}: the unknown route's answer`);
        assert.deepEqual(comparable(res), comparable(expected), `${what}: the same headers`);
      }
      // a platform admin gets the real answers
      assert.equal((await as(t, admin, 'POST', path, {})).status, 400);
      assert.equal((await as(t, admin, 'POST', '/api/admin/accounts/not-a-uuid/lock', { reason: 'x' })).status, 400);
      assert.equal((await t.client('POST', path, { headers: { cookie, authorization: `Bearer ${admin.token}` }, body: { reason: 'x' } })).status, 403, 'CSRF');
    });

    it('opens every admin route to a platform admin, in JSON, EDN and Transit', async () => {
      for (const format of Object.values(FORMAT_BY_NAME)) {
        const stats = await t.client('GET', '/api/admin/stats', { format, headers: { authorization: `Bearer ${admin.token}` } });
        assert.equal(stats.status, 200, stats.text);
        assert.equal(stats.headers['content-type']?.toString().split(';')[0], format.mime);
        assert.ok(stats.body.accounts >= 3);
        const missing = await t.client('POST', `/api/admin/accounts/${user.id}/lock`, {
          format,
          body: {},
          headers: { authorization: `Bearer ${admin.token}` },
        });
        assert.equal(missing.status, 400);
        assert.equal(missing.body.type, 'request-coercion');
        assert.deepEqual(missing.body.errors, [{ path: '/reason', message: "must have required property 'reason'" }]);
        const denied = await t.client('GET', '/api/admin/stats', { format, headers: { authorization: `Bearer ${user.token}` } });
        assert.equal(denied.status, 404);
        assert.equal(denied.body.type, 'not-found');
      }
      for (const [method, path, body] of ROUTES) {
        const res = await as(t, admin, method, path, body);
        assert.doesNotMatch(String(res.body?.message), /^No route/, `${method} ${path}`);
        if (res.status === 404) assert.equal(res.body.message, 'No such account', `${method} ${path}: the route's own 404`);
      }
    });

    it('closes the admin routes to an admin whose address is no longer verified, or who impersonates', async () => {
      const other = await account(t);
      const session = await impersonate(t, admin, other);
      assert.equal(claimsOf(session.token).act.sub, admin.id);
      for (const [method, path, body] of ROUTES.filter(([, p]) => !p.endsWith('/stop'))) {
        const res = await as(t, session, method, path, body);
        assert.equal(res.status, 404, `impersonated: ${method} ${path}`);
      }
      await t.system.database.db.updateTable('account').set({ email_verified: false }).where('id', '=', admin.id).execute();
      try {
        assert.equal((await as(t, admin, 'GET', '/api/admin/stats')).status, 404);
        assert.equal((await as(t, admin, 'GET', '/api/account/me')).body['platform-admin'], false);
      } finally {
        await t.system.database.db.updateTable('account').set({ email_verified: true }).where('id', '=', admin.id).execute();
      }
      assert.equal((await as(t, admin, 'GET', '/api/admin/stats')).status, 200);
    });

    it('refuses a token whose act claim is not an actor', async () => {
      const key = new TextEncoder().encode(TEST_JWT_SECRET);
      const sid = claimsOf(user.token).sid as string;
      for (const act of ['someone', { sub: 7 }, {}, null]) {
        const token = await new SignJWT({ email: user.email, sid, act })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(user.id)
          .setIssuedAt()
          .setExpirationTime('5m')
          .setJti(`j-${JSON.stringify(act)}`)
          .setIssuer('saas-app')
          .setAudience('saas-app')
          .sign(key);
        const res = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 401, JSON.stringify(act));
      }
    });

    it('tags the admin routes Admin in the OpenAPI document', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/admin/'));
      assert.deepEqual(paths.sort(), [
        '/api/admin/accounts',
        '/api/admin/accounts/{id}',
        '/api/admin/accounts/{id}/impersonate',
        '/api/admin/accounts/{id}/lock',
        '/api/admin/accounts/{id}/unlock',
        '/api/admin/audit-log',
        '/api/admin/impersonation/stop',
        '/api/admin/orgs',
        '/api/admin/stats',
      ]);
      for (const p of paths) {
        for (const operation of Object.values(doc.paths[p]) as Array<{ tags: string[]; responses: Record<string, unknown> }>) {
          assert.deepEqual(operation.tags, ['Admin'], p);
          assert.ok(operation.responses['404'], `${p} documents its 404`);
        }
      }
      const forbidden = doc.paths['/api/account/change-password'].post.responses['403'];
      assert.ok(forbidden, 'the sensitive routes document their 403');
    });
  });
}

describe('ADMIN_EMAILS', () => {
  it('is a comma-separated list of addresses, compared lower-cased; anything else names the variable', () => {
    assert.deepEqual([...settingsOf(adminModule, { ADMIN_EMAILS: ' Ops@Example.com ,b@example.org,' }).adminEmails], ['ops@example.com', 'b@example.org']);
    assert.equal(settingsOf(adminModule, {}).adminEmails.size, 0);
    for (const bad of ['not-an-address', 'a@example.com;b@example.com', 'two words@example.com']) {
      assert.throws(
        () => settingsOf(adminModule, { ADMIN_EMAILS: bad }),
        (err: Error) => err instanceof ConfigError && /ADMIN_EMAILS/.test(err.message),
        bad,
      );
    }
  });
});
