/**
 * A SAML just-in-time join takes a seat, so it is held to the plan's seat cap as an invitation is
 * (docs/billing.md, "Seats"; docs/sso.md): on the free plan of the test catalogue (`seats.max` 3), a
 * new person past the cap is sent to `/log-in?error=seat-limit` and nothing is created (no
 * account, no membership, no session); a member signing in again by SAML is not refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REFRESH_COOKIE } from '../../src/auth/refresh-tokens.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';
import { usageEnv } from '../billing/usage-support.js';
import { as } from '../orgs/support.js';
import { cookiesOf } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { dnsServer, postAcs, responseXml, ssoOrg, startSso, type SsoOrg, type TestDns } from './support.js';

for (const db of testDatabases()) {
  describe(`SAML joins and the seat cap on ${db.name}`, () => {
    let stripe: FakeStripe;
    let dns: TestDns;
    let t: TestSystem;
    let org: SsoOrg;
    const signIn = async (email: string) => {
      const requestId = await startSso(t, email);
      return postAcs(t, org.orgId, responseXml(org.idp, { email, acsUrl: org.acsUrl, audience: org.entityId, inResponseTo: requestId }));
    };

    before(async () => {
      [stripe, dns] = await Promise.all([startFakeStripe(), dnsServer()]);
      t = await startSystem(db, usageEnv(stripe.url, { DNS_SERVERS: dns.server }));
      org = await ssoOrg(t, dns);
    });
    after(async () => {
      await t?.stop();
      await Promise.all([dns?.close(), stripe?.close()]);
    });

    it('refuses a new SAML member past the seat cap with /log-in?error=seat-limit; a member still signs in', async () => {
      const member = `member@${org.domain}`;
      const joined = await signIn(member);
      assert.equal(joined.status, 302, joined.text);
      assert.match(String(joined.headers.location), /\/account$/, 'a join below the cap');
      // owner, member and one pending invitation: the free plan's 3 seats
      const invited = await as(t, org.owner, 'POST', `/api/orgs/${org.orgId}/invitations`, { email: 'guest@example.com', role: 'member' });
      assert.equal(invited.status, 201, invited.text);

      const newcomer = `newcomer@${org.domain}`;
      const refused = await signIn(newcomer);
      assert.equal(refused.status, 302, refused.text);
      assert.match(String(refused.headers.location), /\/log-in\?error=seat-limit$/);
      assert.equal(cookiesOf(refused)[REFRESH_COOKIE], undefined, 'no session');
      const { db: database } = t.system.database;
      assert.equal((await database.selectFrom('account').select('id').where('email', '=', newcomer).execute()).length, 0, 'no account made');
      const members = await database.selectFrom('membership').select('account_id').where('organization_id', '=', org.orgId).execute();
      assert.equal(members.length, 2);
      const audit = await database
        .selectFrom('audit_entry')
        .select('details')
        .where('organization_id', '=', org.orgId)
        .where('action', '=', 'sso.sign-in-refused')
        .execute();
      assert.ok(audit.some((a) => (a.details as { reason?: string }).reason === 'seat-limit'));

      const again = await signIn(member);
      assert.equal(again.status, 302, again.text);
      assert.match(String(again.headers.location), /\/account$/, 'an existing member is not held to the cap');
      assert.ok(cookiesOf(again)[REFRESH_COOKIE], 'signed in');
    });
  });
}
