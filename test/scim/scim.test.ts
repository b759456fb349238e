/**
 * SCIM 2.0 over HTTP on both databases, with requests shaped as Okta and Microsoft Entra ID send
 * them: tokens (owners, shown once); discovery; create, filter and pages; duplicate (409
 * uniqueness); deactivation in both PATCH styles and by PUT (the membership suspended, listed so,
 * granting nothing, and the account's sessions ended); reactivation; delete; malformed filters
 * and patches (SCIM 400s with scimType); another organization's token reaches nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { logIn, signUp, verifyEmail } from '../support/auth.js';
import { testDatabases, type TestSystem } from '../support/system.js';
import { PATCH, startDirectory, USER, type Directory } from './support.js';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

for (const db of testDatabases()) {
  describe(`SCIM 2.0 on ${db.name}`, () => {
    let directory: Directory;
    let t: TestSystem;
    let owner: TestAccount;
    let orgId: string;
    let domain: string;
    let token: string;

    before(async () => {
      directory = await startDirectory(db);
      ({ t, owner, orgId, domain, token } = directory);
    });
    after(async () => {
      await directory?.stop();
    });

    /** a SCIM request as a directory sends it */
    const scim = (method: string, path: string, body?: unknown, bearer?: string) => directory.scim(method, path, body, bearer);
    const members = async () =>
      (await as(t, owner, 'GET', `/api/orgs/${orgId}/members`)).body.members as Array<{ email: string; role: string; suspended?: boolean }>;
    const oktaUser = (email: string) => ({
      schemas: [USER],
      userName: email,
      name: { givenName: 'Jane', familyName: 'Doe' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Jane Doe',
      locale: 'en-US',
      externalId: '00u1abcd',
      groups: [],
      active: true,
    });
    const entraUser = (email: string) => ({
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: 'e3f1c0de-0000-4000-8000-000000000001',
      userName: email,
      active: true,
      displayName: 'Eve Entra',
      emails: [{ primary: true, type: 'work', value: email }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Eve Entra', familyName: 'Entra', givenName: 'Eve' },
    });

    it('makes tokens for owners only, shows each once and never again', async () => {
      const admin = await account(t);
      await addMember(t, orgId, owner, admin, 'admin');
      assert.equal((await as(t, admin, 'POST', `/api/orgs/${orgId}/scim-tokens`, { name: 'x' })).status, 403);
      const list = await as(t, owner, 'GET', `/api/orgs/${orgId}/scim-tokens`);
      assert.equal(list.status, 200);
      assert.equal(list.body.tokens.length, 1);
      assert.equal(list.body.tokens[0]['default-role'], 'member');
      assert.ok(!list.text.includes(token));
      assert.match(token, /^scim_[A-Za-z0-9_-]{43}$/);
      const row = await t.system.database.db.selectFrom('scim_token').select('token_hash').executeTakeFirstOrThrow();
      assert.notEqual(row.token_hash, token);
    });

    it("refuses requests without a valid token in SCIM's error shape", async () => {
      for (const bearer of ['', 'nope', `scim_${'A'.repeat(43)}`]) {
        const res = await scim('GET', '/Users', undefined, bearer);
        assert.equal(res.status, 401);
        assert.match(String(res.headers['content-type']), /^application\/scim\+json/);
        assert.deepEqual(res.json.schemas, [ERROR]);
        assert.equal(res.json.status, '401');
      }
    });

    it('answers the discovery documents', async () => {
      const config = await scim('GET', '/ServiceProviderConfig');
      assert.equal(config.status, 200);
      assert.equal(config.json.patch.supported, true);
      assert.equal(config.json.filter.supported, true);
      assert.equal((await scim('GET', '/ResourceTypes')).json.Resources[0].id, 'User');
      assert.equal((await scim('GET', '/Schemas')).json.Resources[0].id, USER);
    });

    it('creates as Okta does, finds by filter, pages, and refuses a duplicate with 409 uniqueness', async () => {
      const email = `jane@${domain}`;
      const created = await scim('POST', '/Users', oktaUser(email));
      assert.equal(created.status, 201, created.text);
      assert.match(String(created.headers['content-type']), /^application\/scim\+json/);
      assert.equal(created.json.userName, email);
      assert.equal(created.json.active, true);
      assert.equal(created.json.externalId, '00u1abcd');
      assert.equal(created.json.meta.location, `${t.system.config.appUrl}/scim/v2/Users/${created.json.id}`);
      const account = await t.system.database.db
        .selectFrom('account')
        .select(['email_verified', 'name'])
        .where('id', '=', created.json.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(account, { email_verified: true, name: 'Jane Doe' });
      assert.equal((await members()).find((m) => m.email === email)?.role, 'member');

      const found = await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${email.toUpperCase()}"`)}&startIndex=1&count=100`);
      assert.equal(found.status, 200);
      assert.equal(found.json.totalResults, 1);
      assert.equal(found.json.Resources[0].id, created.json.id);
      const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`);
      assert.equal(none.json.totalResults, 0);
      assert.deepEqual(none.json.Resources, []);
      const byExternal = await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "00u1abcd" and active eq true')}`);
      assert.equal(byExternal.json.totalResults, 1);

      const duplicate = await scim('POST', '/Users', oktaUser(email));
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.json.scimType, 'uniqueness');

      await scim('POST', '/Users', oktaUser(`jim@${domain}`));
      const page = await scim('GET', '/Users?startIndex=2&count=1');
      assert.equal(page.json.itemsPerPage, 1);
      assert.equal(page.json.startIndex, 2);
      assert.ok(page.json.totalResults >= 3);
    });

    it('answers malformed filters, paging and patches with SCIM 400s and a scimType', async () => {
      const bad = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq')}`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.scimType, 'invalidFilter');
      assert.equal((await scim('GET', '/Users?count=lots')).json.scimType, 'invalidValue');
      const noName = await scim('POST', '/Users', { schemas: [USER], active: true });
      assert.equal(noName.status, 400);
      assert.equal(noName.json.scimType, 'invalidValue');
      const id = (await scim('POST', '/Users', oktaUser(`patchy@${domain}`))).json.id;
      const noSchema = await scim('PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', value: { active: false } }] });
      assert.equal(noSchema.json.scimType, 'invalidSyntax');
      const badOp = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'explode', path: 'active' }] });
      assert.equal(badOp.status, 400);
      assert.ok(['invalidSyntax', 'invalidPath'].includes(badOp.json.scimType), badOp.text);
      const badValue = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'maybe' }] });
      assert.equal(badValue.json.scimType, 'invalidValue');
      assert.equal((await scim('GET', '/Users/not-a-uuid')).status, 404);
    });

    it("refuses a patch whose path or attribute names reach the prototype, and leaves every object's prototype alone", async () => {
      const id = (await scim('POST', '/Users', oktaUser(`proto@${domain}`))).json.id;
      const attempts = [
        { op: 'replace', path: '__proto__.polluted', value: 'yes' },
        { op: 'add', path: 'name.constructor.prototype.polluted', value: 'yes' },
        { op: 'add', value: { '__proto__.polluted': 'yes' } },
        { op: 'add', value: { name: { 'constructor.prototype.polluted': 'yes' } } },
        { op: 'replace', path: 'emails[type eq "work"].__proto__', value: { polluted: 'yes' } },
      ];
      for (const op of attempts) {
        const res = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [op] });
        assert.equal(res.status, 400, JSON.stringify(op));
        assert.equal(res.json.scimType, 'invalidPath');
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');
      // an ordinary value that merely says "constructor" is a value like any other
      const named = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'name.givenName', value: 'constructor' }] });
      assert.equal(named.status, 200, named.text);
    });

    it("links an existing account only when its address is verified: an unverified one (a squatter's sign-up) is 409 uniqueness", async () => {
      const email = `squatted@${domain}`;
      const squatter = await signUp(t.client, email);
      for (const body of [oktaUser(email), entraUser(email.toUpperCase())]) {
        const res = await scim('POST', '/Users', body);
        assert.equal(res.status, 409, res.text);
        assert.deepEqual([res.json.schemas, res.json.status, res.json.scimType], [[ERROR], '409', 'uniqueness']);
      }
      assert.equal(
        (await members()).some((m) => m.email === email),
        false,
        'not a member',
      );
      const memberships = await t.system.database.db.selectFrom('membership').select('organization_id').where('account_id', '=', squatter.id).execute();
      assert.equal(memberships.length, 1, 'only its personal organization');
      // once its owner proves the address, the directory's next push links it
      await verifyEmail(t, email);
      const linked = await scim('POST', '/Users', oktaUser(email));
      assert.equal(linked.status, 201, linked.text);
      assert.equal(linked.json.id, squatter.id);
    });

    it("provisions only addresses of the organization's verified domains: no account is made for anyone else's", async () => {
      const outsider = `someone-${Date.now()}@gmail.example`;
      const res = await scim('POST', '/Users', oktaUser(outsider));
      assert.equal(res.status, 400);
      assert.equal(res.json.scimType, 'invalidValue');
      const row = await t.system.database.db.selectFrom('account').select('id').where('email', '=', outsider).executeTakeFirst();
      assert.equal(row, undefined);
    });

    it("deactivates as Okta does: suspended, listed so, granting nothing, and the account's sessions end at once", async () => {
      const person = await account(t, { email: `okta-person@${domain}` });
      const created = await scim('POST', '/Users', oktaUser(person.email));
      assert.equal(created.status, 201, 'an existing account of a verified domain is linked');
      const session = await logIn(t.client, person.email);
      assert.equal(session.status, 200);
      const bearer = session.body['access-token'];
      assert.equal((await t.client('GET', `/api/orgs/${orgId}`, { headers: { authorization: `Bearer ${bearer}` } })).status, 200);

      const off = await scim('PATCH', `/Users/${created.json.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.json.active, false);
      assert.equal((await members()).find((m) => m.email === person.email)?.suspended, true);
      assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${bearer}` } })).status, 401, 'the access token is refused');
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': session.body['refresh-token'] } })).status, 401);
      // a new session of the account gets nothing from the suspended membership
      const again = await logIn(t.client, person.email);
      const orgs = await t.client('GET', '/api/orgs', { headers: { authorization: `Bearer ${again.body['access-token']}` } });
      assert.ok(!orgs.body.organizations.some((o: { id: string }) => o.id === orgId));
      assert.equal((await t.client('GET', `/api/orgs/${orgId}`, { headers: { authorization: `Bearer ${again.body['access-token']}` } })).status, 404);

      const on = await scim('PATCH', `/Users/${created.json.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
      assert.equal(on.json.active, true);
      assert.equal((await t.client('GET', `/api/orgs/${orgId}`, { headers: { authorization: `Bearer ${again.body['access-token']}` } })).status, 200);
    });

    it('creates and deactivates as Entra ID does ("Replace", a path, "False"), and by PUT', async () => {
      const email = `eve@${domain}`;
      const created = await scim('POST', '/Users', entraUser(email));
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.displayName, 'Eve Entra');
      const off = await scim('PATCH', `/Users/${created.json.id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.json.active, false);
      const on = await scim('PATCH', `/Users/${created.json.id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
      assert.equal(on.json.active, true);
      const rename = await scim('PATCH', `/Users/${created.json.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'Add', path: 'externalId', value: 'new-external' }],
      });
      assert.equal(rename.json.externalId, 'new-external');
      const put = await scim('PUT', `/Users/${created.json.id}`, { ...entraUser(email), active: false });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.json.active, false);
      const otherName = await scim('PUT', `/Users/${created.json.id}`, { ...entraUser(`other@${domain}`) });
      assert.equal(otherName.json.scimType, 'mutability');
    });

    it("removes the membership on DELETE; owners are not the directory's", async () => {
      const created = await scim('POST', '/Users', oktaUser(`leaver@${domain}`));
      const removed = await scim('DELETE', `/Users/${created.json.id}`);
      assert.equal(removed.status, 204);
      assert.equal((await scim('GET', `/Users/${created.json.id}`)).status, 404);
      assert.ok(!(await members()).some((m) => m.email === `leaver@${domain}`));
      const ownerUser = await scim('DELETE', `/Users/${owner.id}`);
      assert.equal(ownerUser.status, 400);
      assert.equal(ownerUser.json.scimType, 'mutability');
    });

    it("never reaches another organization's users with a token", async () => {
      const otherOwner = await account(t);
      const otherOrg = await createOrg(t, otherOwner, 'Other');
      const otherToken = (await as(t, otherOwner, 'POST', `/api/orgs/${otherOrg}/scim-tokens`, { name: 'Entra' })).body.token;
      const ours = await scim('POST', '/Users', oktaUser(`ours@${domain}`));
      assert.equal((await scim('GET', `/Users/${ours.json.id}`, undefined, otherToken)).status, 404);
      assert.equal(
        (await scim('PATCH', `/Users/${ours.json.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }, otherToken)).status,
        404,
      );
      assert.equal((await scim('DELETE', `/Users/${ours.json.id}`, undefined, otherToken)).status, 404);
      assert.equal((await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "ours@${domain}"`)}`, undefined, otherToken)).json.totalResults, 0);
      // and cannot link an existing account of a domain it has not verified
      const linked = await scim('POST', '/Users', oktaUser(`ours@${domain}`), otherToken);
      assert.equal(linked.status, 400);
      assert.equal(linked.json.scimType, 'invalidValue');
      assert.equal((await scim('GET', `/Users/${ours.json.id}`)).json.active, true);
      // a revoked token stops at once
      const list = await as(t, otherOwner, 'GET', `/api/orgs/${otherOrg}/scim-tokens`);
      assert.equal((await as(t, otherOwner, 'DELETE', `/api/orgs/${otherOrg}/scim-tokens/${list.body.tokens[0].id}`)).status, 204);
      assert.equal((await scim('GET', '/Users', undefined, otherToken)).status, 401);
    });
  });
}
