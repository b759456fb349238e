/**
 * What a directory and an identity provider change, as the rest of the product hears it (issue
 * 37): SCIM provisioning, suspension, reactivation and removal, and a SAML join, each emit the
 * `member.*` webhook event invitations and removals emit, in the change's transaction; and a
 * SCIM token's requests are limited (SCIM_LIMIT_TOKEN): 429 in SCIM's error shape with
 * Retry-After, another token unaffected. On both databases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as } from '../orgs/support.js';
import type { TestResponse } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { dnsServer, postAcs, responseXml, ssoOrg, startSso, type SsoOrg, type TestDns } from '../sso/support.js';
import { createEndpoint, receiver, type Receiver } from '../webhooks/support.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PER_TOKEN = 6;

for (const db of testDatabases()) {
  describe(`directory and sign-on membership events on ${db.name}`, () => {
    let t: TestSystem;
    let dns: TestDns;
    let hook: Receiver;
    let org: SsoOrg;

    before(async () => {
      dns = await dnsServer();
      hook = await receiver();
      t = await startSystem(db, { DNS_SERVERS: dns.server, WEBHOOK_ALLOW_PRIVATE: 'true', SCIM_LIMIT_TOKEN: `${PER_TOKEN}/3600` });
      org = await ssoOrg(t, dns);
      await createEndpoint(t, org.owner, org.orgId, { url: `${hook.url}/members`, events: ['member.added', 'member.updated', 'member.removed'] });
    });
    after(async () => {
      await t?.stop();
      await hook?.close();
      await dns?.close();
    });

    const newToken = async (name: string) => {
      const created = await as(t, org.owner, 'POST', `/api/orgs/${org.orgId}/scim-tokens`, { name });
      assert.equal(created.status, 201, created.text);
      return created.body.token as string;
    };
    const scim = async (token: string, method: string, path: string, body?: unknown): Promise<TestResponse & { json: any }> => {
      const res = await t.client(method, `/scim/v2${path}`, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/scim+json',
          ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        },
      });
      return { ...res, json: res.text ? JSON.parse(res.text) : undefined };
    };
    /** the organization's webhook messages about `accountId`, oldest first: [type, member] */
    const eventsFor = async (accountId: string) => {
      const rows = await t.system.database.db
        .selectFrom('webhook_message')
        .select(['type', 'payload'])
        .where('organization_id', '=', org.orgId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map((r) => [r.type, JSON.parse(r.payload).data.member] as const).filter(([, member]) => member?.['account-id'] === accountId);
    };

    it("emits member.added, member.updated (suspended, then lifted) and member.removed for the directory's changes", async () => {
      const token = await newToken('Okta');
      const email = `dana@${org.domain}`;
      const created = await scim(token, 'POST', '/Users', { schemas: [USER], userName: email, displayName: 'Dana', active: true });
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      const deactivate = (active: boolean) => scim(token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active } }] });
      assert.equal((await deactivate(false)).status, 200);
      assert.equal((await deactivate(false)).status, 200, 'suspending a suspended member changes nothing');
      assert.equal((await deactivate(true)).status, 200);
      assert.equal((await scim(token, 'DELETE', `/Users/${id}`)).status, 204);

      const events = await eventsFor(id);
      assert.deepEqual(
        events.map(([type, member]) => [type, member.suspended]),
        [
          ['member.added', false],
          ['member.updated', true],
          ['member.updated', false],
          ['member.removed', false],
        ],
      );
      const [, added] = events[0];
      assert.deepEqual(
        { ...added, 'joined-at': undefined },
        { 'account-id': id, email, name: 'Dana', role: 'member', 'joined-at': undefined, suspended: false },
      );
    });

    it('emits member.added when a SAML sign-in makes someone a member, and nothing when it signs a member in again', async () => {
      const email = `sam@${org.domain}`;
      const signIn = async () => {
        const res = await postAcs(
          t,
          org.orgId,
          responseXml(org.idp, { email, acsUrl: org.acsUrl, audience: org.entityId, inResponseTo: await startSso(t, email) }),
        );
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`, String(res.headers.location));
      };
      await signIn();
      await signIn();
      const account = await t.system.database.db.selectFrom('account').select('id').where('email', '=', email).executeTakeFirstOrThrow();
      const events = await eventsFor(account.id);
      assert.deepEqual(
        events.map(([type, member]) => [type, member.email, member.role]),
        [['member.added', email, 'member']],
      );
    });

    it("limits each SCIM token's requests: 429 in SCIM's error shape with Retry-After; another token is not held", async () => {
      const busy = await newToken('Busy');
      for (let i = 0; i < PER_TOKEN; i++) assert.equal((await scim(busy, 'GET', '/Users?count=1')).status, 200, `request ${i + 1}`);
      const limited = await scim(busy, 'POST', '/Users', { schemas: [USER], userName: `late@${org.domain}` });
      assert.equal(limited.status, 429, limited.text);
      assert.match(String(limited.headers['content-type']), /^application\/scim\+json/);
      assert.deepEqual([limited.json.schemas, limited.json.status], [[ERROR], '429']);
      assert.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After');
      const none = await t.system.database.db.selectFrom('account').select('id').where('email', '=', `late@${org.domain}`).executeTakeFirst();
      assert.equal(none, undefined, 'nothing provisioned past the limit');
      const other = await newToken('Other');
      assert.equal((await scim(other, 'GET', '/Users?count=1')).status, 200);
    });
  });
}
