/**
 * Impersonation over HTTP (issue 29): a reason, never oneself, another admin or a locked account;
 * a session of the account whose tokens carry `act` (RFC 8693) and which ends within an hour
 * whatever the refreshes; the sensitive actions refused by route data; its changes audited with
 * both identities; stopped by its own token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { browserSession, cookiesOf, logIn, PASSWORD } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { adminAddresses, claimsOf, impersonate } from './support.js';

const FORBIDDEN = { type: 'impersonation-forbidden' };

for (const db of testDatabases()) {
  describe(`Impersonation on ${db.name}`, () => {
    let t: TestSystem;
    let admin: TestAccount;
    let otherAdmin: TestAccount;
    let user: TestAccount;
    let orgId: string;
    const addresses = adminAddresses();
    const second = adminAddresses();

    before(async () => {
      t = await startSystem(db, { ADMIN_EMAILS: `${addresses.verified},${second.verified}`, REFRESH_REUSE_GRACE: '0' });
      admin = await account(t, { email: addresses.verified });
      otherAdmin = await account(t, { email: second.verified });
      user = await account(t);
      orgId = await createOrg(t, user, 'Customer Co');
    });
    after(async () => t?.stop());

    const familyOf = (token: string) =>
      t.system.database.db
        .selectFrom('refresh_family')
        .select(['id', 'account_id', 'actor_account_id', 'created_at', 'expires_at', 'revoked_at'])
        .where('id', '=', claimsOf(token).sid)
        .executeTakeFirstOrThrow();

    it('needs a reason, and refuses oneself, another platform admin, a locked account and an unknown one', async () => {
      const path = `/api/admin/accounts/${user.id}/impersonate`;
      for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(501) }, { reason: 'ok', extra: 1 }]) {
        const res = await as(t, admin, 'POST', path, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.type, 'request-coercion');
      }
      const self = await as(t, admin, 'POST', `/api/admin/accounts/${admin.id}/impersonate`, { reason: 'curious' });
      assert.equal(self.status, 403);
      assert.equal(self.body.reason, 'self');
      const peer = await as(t, admin, 'POST', `/api/admin/accounts/${otherAdmin.id}/impersonate`, { reason: 'curious' });
      assert.equal(peer.status, 403);
      assert.equal(peer.body.reason, 'platform-admin');
      const unknown = await as(t, admin, 'POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/impersonate', { reason: 'ticket' });
      assert.equal(unknown.status, 404);
      const locked = await account(t);
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${locked.id}/lock`, { reason: 'spam' })).status, 200);
      const refused = await as(t, admin, 'POST', `/api/admin/accounts/${locked.id}/impersonate`, { reason: 'ticket' });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.type, 'account-locked');
      const families = await t.system.database.db.selectFrom('refresh_family').select('id').where('actor_account_id', 'is not', null).execute();
      assert.deepEqual(families, [], 'no session was opened');
    });

    it('opens a session of the account whose tokens carry act, with impersonated-by, in a cookie of its own', async () => {
      const session = await impersonate(t, admin, user);
      const claims = claimsOf(session.token);
      assert.equal(claims.sub, user.id);
      assert.equal(claims.email, user.email);
      assert.deepEqual(claims.act, { sub: admin.id });
      assert.ok(claims.exp - claims.iat <= 900);
      const body = session.res.body;
      assert.deepEqual(body.account['impersonated-by'], { id: admin.id, email: admin.email });
      assert.equal(body.account['platform-admin'], false);
      assert.equal(body['token-type'], 'Bearer');
      const cookies = cookiesOf(session.res);
      assert.deepEqual(Object.keys(cookies), ['impersonation-token'], "the admin's own refresh cookie is left alone");
      assert.equal(cookies['impersonation-token'].value, session.refresh);
      assert.match(cookies['impersonation-token'].attributes, /Path=\/api\/account/);
      assert.match(cookies['impersonation-token'].attributes, /HttpOnly/);
      assert.match(cookies['impersonation-token'].attributes, /SameSite=Strict/);

      const me = await as(t, session, 'GET', '/api/account/me');
      assert.deepEqual(me.body['impersonated-by'], { id: admin.id, email: admin.email });
      const query = await as(t, session, 'POST', '/api/cqrs/query', { 'query/kind': 'account/me' });
      assert.deepEqual(query.body['impersonated-by'], { id: admin.id, email: admin.email });
      const family = await familyOf(session.token);
      assert.equal(family.account_id, user.id);
      assert.equal(family.actor_account_id, admin.id);
      assert.ok(family.expires_at.getTime() - family.created_at.getTime() <= 3_600_000 + 1000, 'one hour at most');
      assert.equal((await as(t, admin, 'GET', '/api/account/me')).body['impersonated-by'], undefined, "the admin's own session is its own");
      assert.equal((await as(t, user, 'GET', '/api/account/me')).body['impersonated-by'], undefined, "the account's own sessions too");
      const detail = (await as(t, admin, 'GET', `/api/admin/accounts/${user.id}`)).body;
      assert.equal(
        detail['last-seen-at'],
        (await as(t, admin, 'GET', `/api/admin/accounts?q=${encodeURIComponent(user.email)}`)).body.accounts[0]['last-seen-at'],
      );
    });

    it('lives at most an hour: a refresh keeps the actor and the end, and never extends it', async () => {
      const session = await impersonate(t, admin, user);
      const before = await familyOf(session.token);
      const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': session.refresh } });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.deepEqual(claimsOf(refreshed.body['access-token']).act, { sub: admin.id });
      assert.deepEqual(refreshed.body.account['impersonated-by'], { id: admin.id, email: admin.email });
      assert.equal((await familyOf(refreshed.body['access-token'])).expires_at.getTime(), before.expires_at.getTime(), 'the end stays');

      // near its end, tokens end with it
      const end = new Date(Date.now() + 20_000);
      await t.system.database.db.updateTable('refresh_family').set({ expires_at: end }).where('id', '=', before.id).execute();
      const late = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': refreshed.body['refresh-token'] } });
      assert.equal(late.status, 200);
      assert.ok(late.body['expires-in'] <= 20, `expires-in ${late.body['expires-in']}`);
      assert.ok(claimsOf(late.body['access-token']).exp <= Math.ceil(end.getTime() / 1000));

      await t.system.database.db
        .updateTable('refresh_family')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('id', '=', before.id)
        .execute();
      const over = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': late.body['refresh-token'] } });
      assert.equal(over.status, 401);
    });

    it("refreshes from its own cookie in a browser, leaving the admin's; its end clears only its cookie; log-out ends both", async () => {
      const { cookie, csrf } = await browserSession(t.client);
      const own = await t.client('POST', '/api/account/log-in', {
        headers: { cookie, 'x-csrf-token': csrf },
        body: { email: admin.email, password: PASSWORD },
      });
      const adminRefresh = cookiesOf(own)['refresh-token'].value;
      const session = await impersonate(t, admin, user);
      const jar = `${cookie}; refresh-token=${adminRefresh}; impersonation-token=${session.refresh}`;
      const refreshed = await t.client('POST', '/api/account/refresh', { headers: { cookie: jar, 'x-csrf-token': csrf }, body: {} });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.equal(claimsOf(refreshed.body['access-token']).sub, user.id);
      assert.deepEqual(Object.keys(cookiesOf(refreshed)), ['impersonation-token']);
      const next = cookiesOf(refreshed)['impersonation-token'].value;

      await t.system.database.db
        .updateTable('refresh_family')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('id', '=', claimsOf(session.token).sid)
        .execute();
      const ended = await t.client('POST', '/api/account/refresh', {
        headers: { cookie: `${cookie}; refresh-token=${adminRefresh}; impersonation-token=${next}`, 'x-csrf-token': csrf },
        body: {},
      });
      assert.equal(ended.status, 401);
      assert.deepEqual(Object.keys(cookiesOf(ended)), ['impersonation-token'], 'only its own cookie is cleared');
      const back = await t.client('POST', '/api/account/refresh', {
        headers: { cookie: `${cookie}; refresh-token=${adminRefresh}`, 'x-csrf-token': csrf },
        body: {},
      });
      assert.equal(back.status, 200, "the admin's own session is there");
      assert.equal(claimsOf(back.body['access-token']).sub, admin.id);
      assert.equal(claimsOf(back.body['access-token']).act, undefined);

      const again = await impersonate(t, admin, user);
      const adminNow = cookiesOf(back)['refresh-token'].value;
      const out = await t.client('POST', '/api/account/log-out', {
        headers: { cookie: `${cookie}; refresh-token=${adminNow}; impersonation-token=${again.refresh}`, 'x-csrf-token': csrf },
        body: {},
      });
      assert.equal(out.status, 204);
      // the session's own cookies, and the OAuth provider's of this browser (docs/oauth.md, "Sessions")
      assert.deepEqual(Object.keys(cookiesOf(out)).sort(), [
        'has-session',
        'impersonation-token',
        'oauth_interaction',
        'oauth_interaction.sig',
        'oauth_session',
        'oauth_session.sig',
        'refresh-token',
      ]);
      assert.equal((await as(t, again, 'GET', '/api/account/me')).status, 401);
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': adminNow } })).status, 401);
    });

    it("cannot change the account's credentials, sign-in methods or API keys, nor delete it: 403 impersonation-forbidden", async () => {
      const session = await impersonate(t, admin, user);
      const anId = '00000000-0000-4000-8000-000000000000';
      const attempts: Array<[string, string, unknown]> = [
        ['POST', '/api/account/change-password', { 'current-password': PASSWORD, password: 'a brand new passphrase' }],
        ['POST', '/api/account/change-email', { 'new-email': 'taken-over@example.com', password: PASSWORD }],
        ['POST', '/api/account/2fa/setup', {}],
        ['POST', '/api/account/2fa/enable', { code: '123456', password: PASSWORD }],
        ['POST', '/api/account/2fa/disable', { password: PASSWORD }],
        ['POST', '/api/account/passkeys/register/options', {}],
        ['POST', '/api/account/passkeys/register/verify', {}],
        ['PATCH', `/api/account/passkeys/${anId}`, { name: 'mine' }],
        ['DELETE', `/api/account/passkeys/${anId}`, undefined],
        ['DELETE', `/api/account/identities/${anId}`, undefined],
        ['POST', '/api/auth/oauth/github/link', {}],
        ['POST', '/api/account/delete', { password: PASSWORD }],
        ['POST', `/api/orgs/${orgId}/api-keys`, { name: 'backdoor', role: 'admin' }],
      ];
      for (const [method, path, body] of attempts) {
        const res = await as(t, session, method, path, body);
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.type, FORBIDDEN.type, `${method} ${path}`);
      }
      // the account's own session is refused for its own reasons only
      const wrong = await as(t, user, 'POST', '/api/account/change-password', { 'current-password': 'not the password', password: 'a brand new passphrase' });
      assert.equal(wrong.body.type, 'forbidden');
      assert.equal((await as(t, user, 'POST', '/api/account/2fa/setup', {})).status, 200);
      assert.equal((await logIn(t.client, user.email)).status, 200, 'the password is unchanged');
      // and what it may do
      assert.equal((await as(t, session, 'GET', '/api/account/sessions')).status, 200);
      assert.equal((await as(t, session, 'GET', `/api/orgs/${orgId}`)).status, 200);
      assert.equal((await as(t, session, 'PATCH', '/api/account/me', { name: 'Renamed by support' })).body['impersonated-by'].id, admin.id);
    });

    it('cannot set up what outlasts the session: SAML, SCIM tokens, webhook endpoints and their secrets, invitations of admins or owners', async () => {
      const session = await impersonate(t, admin, user);
      const anId = '00000000-0000-4000-8000-000000000000';
      const attempts: Array<[string, string, unknown]> = [
        ['PUT', `/api/orgs/${orgId}/sso/saml`, { 'metadata-xml': '<EntityDescriptor/>' }],
        ['DELETE', `/api/orgs/${orgId}/sso/saml`, undefined],
        ['POST', `/api/orgs/${orgId}/scim-tokens`, { name: 'backdoor' }],
        ['POST', `/api/orgs/${orgId}/webhooks`, { url: 'https://hooks.example.com/exfiltrate', events: ['*'] }],
        ['PATCH', `/api/orgs/${orgId}/webhooks/${anId}`, { url: 'https://hooks.example.com/exfiltrate' }],
        ['POST', `/api/orgs/${orgId}/webhooks/${anId}/rotate-secret`, undefined],
        ['GET', `/api/orgs/${orgId}/webhooks/${anId}/secret`, undefined],
        ['POST', `/api/orgs/${orgId}/invitations`, { email: 'second-address@example.com', role: 'admin' }],
        ['POST', `/api/orgs/${orgId}/invitations`, { email: 'second-address@example.com', role: 'owner' }],
      ];
      for (const [method, path, body] of attempts) {
        const res = await as(t, session, method, path, body);
        assert.equal(res.status, 403, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.type, FORBIDDEN.type, `${method} ${path}`);
      }
      assert.deepEqual(await t.system.database.db.selectFrom('invitation').select('id').where('organization_id', '=', orgId).execute(), []);
      // a member's invitation is not a way back in: allowed, with or without the role named
      assert.equal((await as(t, session, 'POST', `/api/orgs/${orgId}/invitations`, { email: 'a-colleague@example.com', role: 'member' })).status, 201);
      assert.equal((await as(t, session, 'POST', `/api/orgs/${orgId}/invitations`, { email: 'another-colleague@example.com' })).status, 201);
      // the rule reads the validated body: a bad one is still 400
      assert.equal((await as(t, session, 'POST', `/api/orgs/${orgId}/invitations`, { email: 'x@example.com', role: 'emperor' })).status, 400);
      // and the account's own session does all of it
      const own = await as(t, user, 'POST', `/api/orgs/${orgId}/invitations`, { email: 'second-address@example.com', role: 'admin' });
      assert.equal(own.status, 201, own.text);
      assert.equal((await as(t, user, 'POST', `/api/orgs/${orgId}/scim-tokens`, { name: 'directory' })).status, 201);
    });

    it("audits its changes with the admin as actor and the account as impersonated, in the organization's log and the admin audit log", async () => {
      const session = await impersonate(t, admin, user, 'customer asked to fix the name');
      const renamed = await as(t, session, 'PATCH', `/api/orgs/${orgId}`, { name: 'Customer Company' });
      assert.equal(renamed.status, 200, renamed.text);

      const orgLog = (await as(t, user, 'GET', `/api/orgs/${orgId}/audit-log`)).body.entries;
      assert.equal(orgLog[0].action, 'org.renamed');
      assert.deepEqual(orgLog[0].actor, { 'account-id': admin.id, 'api-key-id': null }, 'the admin acted (not a member: no address)');
      assert.deepEqual(orgLog[0].impersonated, { 'account-id': user.id, email: user.email });

      const adminLog = (await as(t, admin, 'GET', `/api/admin/audit-log?account-id=${user.id}`)).body.entries;
      const change = adminLog.find((e: { action: string }) => e.action === 'org.renamed');
      assert.ok(change, 'the change is in the admin audit log');
      assert.equal(change['organization-id'], orgId);
      assert.deepEqual(change.actor, { 'account-id': admin.id, email: admin.email, 'api-key-id': null });
      assert.deepEqual(change.impersonated, { 'account-id': user.id, email: user.email });
      const started = adminLog.find(
        (e: { action: string; details: { reason?: string } }) =>
          e.action === 'admin.impersonation-started' && e.details.reason === 'customer asked to fix the name',
      );
      assert.ok(started);
      assert.equal(started.details['session-id'], claimsOf(session.token).sid);
      assert.deepEqual(started.target, { type: 'account', id: user.id, email: user.email });

      // the account sees it was entered, in its personal organization's log
      const personal = (await as(t, user, 'GET', '/api/orgs')).body.organizations.find((o: { personal: boolean }) => o.personal).id;
      const own = (await as(t, user, 'GET', `/api/orgs/${personal}/audit-log`)).body.entries.map((e: { action: string }) => e.action);
      assert.ok(own.includes('admin.impersonation-started'));
      // the account's own changes stay its own
      await as(t, user, 'PATCH', `/api/orgs/${orgId}`, { name: 'Customer Co' });
      const mine = (await as(t, user, 'GET', `/api/orgs/${orgId}/audit-log`)).body.entries[0];
      assert.equal(mine.actor['account-id'], user.id);
      assert.equal('impersonated' in mine, false);
      const row = await t.system.database.db.selectFrom('audit_entry').select(['admin_log']).where('id', '=', mine.id).executeTakeFirstOrThrow();
      assert.equal(row.admin_log, false);
    });

    it("stops with its own token: its access and refresh tokens answer 401; the admin's session goes on", async () => {
      const notImpersonating = await as(t, admin, 'POST', '/api/admin/impersonation/stop', {});
      assert.equal(notImpersonating.status, 409);
      const session = await impersonate(t, admin, user);
      assert.equal((await as(t, session, 'GET', '/api/account/me')).status, 200);
      const stopped = await as(t, session, 'POST', '/api/admin/impersonation/stop', {});
      assert.equal(stopped.status, 204, stopped.text);
      assert.match(String(cookiesOf(stopped)['impersonation-token']?.attributes), /Expires=Thu, 01 Jan 1970/);
      assert.equal((await as(t, session, 'GET', '/api/account/me')).status, 401);
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': session.refresh } })).status, 401);
      assert.equal((await as(t, session, 'POST', '/api/admin/impersonation/stop', {})).status, 404, 'closed to it like every admin route');
      assert.equal((await as(t, admin, 'GET', '/api/account/me')).status, 200);
      const entry = (await as(t, admin, 'GET', `/api/admin/audit-log?account-id=${user.id}&limit=1`)).body.entries[0];
      assert.equal(entry.action, 'admin.impersonation-stopped');
      assert.equal(entry.actor['account-id'], admin.id);
      assert.equal(entry.impersonated['account-id'], user.id);
    });

    it("ends with the account's lock, and with the admin's sessions", async () => {
      const target = await account(t);
      const one = await impersonate(t, admin, target);
      assert.equal((await as(t, admin, 'POST', `/api/admin/accounts/${target.id}/lock`, { reason: 'fraud' })).status, 200);
      assert.equal((await as(t, one, 'GET', '/api/account/me')).status, 401, 'locking ends the impersonation too');

      const two = await impersonate(t, admin, user);
      const changed = await as(t, admin, 'POST', '/api/account/change-password', { 'current-password': PASSWORD, password: 'another long passphrase' });
      assert.equal(changed.status, 204, changed.text);
      assert.equal((await as(t, two, 'GET', '/api/account/me')).status, 401, "the admin's other sessions, impersonations included, end");
      assert.equal((await as(t, admin, 'GET', '/api/account/me')).status, 200);
    });
  });
}
