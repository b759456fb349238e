/**
 * The ACS's post limits (issue 37), on a system with small ones: per request id named (a refused
 * post leaves its request live, so one request could be posted against for ten minutes) and per
 * client address. Each answers 429 with Retry-After before the response is read; the limited
 * request id's genuine answer is refused while the limit lasts, another request is not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { dnsServer, postAcs, responseXml, ssoOrg, startSso, type SsoOrg, type TestDns } from './support.js';

const PER_REQUEST = 3;
const PER_ADDRESS = 6;

for (const db of testDatabases()) {
  describe(`SAML ACS limits on ${db.name}`, () => {
    let t: TestSystem;
    let dns: TestDns;
    let org: SsoOrg;

    before(async () => {
      dns = await dnsServer();
      t = await startSystem(db, { DNS_SERVERS: dns.server, SSO_ACS_LIMIT_REQUEST: `${PER_REQUEST}/600`, SSO_ACS_LIMIT_ADDRESS: `${PER_ADDRESS}/3600` });
      org = await ssoOrg(t, dns);
    });
    after(async () => {
      await t?.stop();
      await dns?.close();
    });

    const unsigned = (email: string, requestId: string) =>
      responseXml(org.idp, { email, acsUrl: org.acsUrl, audience: org.entityId, inResponseTo: requestId, sign: 'none' });
    const genuine = (email: string, requestId: string) => responseXml(org.idp, { email, acsUrl: org.acsUrl, audience: org.entityId, inResponseTo: requestId });

    it('limits posts naming one request id, then posts from one client address: 429', async () => {
      const email = `limited@${org.domain}`;
      const requestId = await startSso(t, email);
      for (let i = 0; i < PER_REQUEST; i++) {
        const refused = await postAcs(t, org.orgId, unsigned(email, requestId));
        assert.equal(refused.status, 302, `post ${i + 1}: refused as usual (${refused.text})`);
      }
      const limited = await postAcs(t, org.orgId, genuine(email, requestId));
      assert.equal(limited.status, 429, limited.text);
      assert.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After');

      // another request id is not limited by the first one's posts
      const other = await startSso(t, email);
      const signedIn = await postAcs(t, org.orgId, genuine(email, other));
      assert.equal(signedIn.headers.location, `${t.system.config.appUrl}/account`, String(signedIn.headers.location));

      // five posts so far from this address; the sixth passes, then the address is out
      const sixth = await postAcs(t, org.orgId, unsigned(email, 'a-request-of-nobody'));
      assert.equal(sixth.status, 302);
      const seventh = await postAcs(t, org.orgId, genuine(email, await startSso(t, email)));
      assert.equal(seventh.status, 429, seventh.text);
      assert.equal((await t.client('GET', '/api/health/live')).status, 200, 'the server answers on');
    });
  });
}
