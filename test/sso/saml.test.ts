/**
 * Enterprise sign-on over HTTP on both databases, against a DNS server (dns2) and a SAML
 * identity provider started here: domain verification and its conflicts; connections from
 * pasted metadata (hostile metadata is a 400); the sign-on round trip to a session; each
 * refused response (unsigned, another key, wrapped, altered, expired, replayed, another
 * audience, unsolicited...) leaves no session and is logged and audited, never a 500; linking
 * existing accounts; enforcement; the certificate expiry email.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { REFRESH_COOKIE } from '../../src/auth/refresh-tokens.js';
import { ssoModule } from '../../src/sso/module.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { cookiesOf, logIn, PASSWORD, signUp } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import type { TestResponse } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import {
  assertionXml,
  dnsServer,
  makeIdp,
  postAcs,
  responseXml,
  sign,
  ssoOrg,
  startSso,
  uniqueDomain,
  verifiedDomain,
  type SsoOrg,
  type TestDns,
} from './support.js';

const FAILED = /\/log-in\?error=sso-failed$/;

for (const db of testDatabases()) {
  describe(`SAML single sign-on on ${db.name}`, () => {
    let t: TestSystem;
    let dns: TestDns;
    let org: SsoOrg;

    before(async () => {
      dns = await dnsServer();
      t = await startSystem(db, { DNS_SERVERS: dns.server });
      org = await ssoOrg(t, dns);
    });
    after(async () => {
      await t?.stop();
      await dns?.close();
    });

    const refusals = async (reason: string) => {
      const entries = (await t.logEntries()).filter((e) => e.id === 'sso/saml-refused' && e.data.reason === reason);
      const audited = await sql<{
        n: string;
      }>`select count(*) as n from audit_entry where action = 'sso.sign-in-refused' and details->>'reason' = ${reason}`.execute(t.system.database.db);
      return { logged: entries.length, audited: Number(audited.rows[0].n) };
    };
    const assertRefused = async (res: TestResponse, reason: string) => {
      assert.equal(res.status, 302, res.text);
      assert.match(String(res.headers.location), FAILED);
      assert.equal(cookiesOf(res)[REFRESH_COOKIE], undefined, 'no session');
      const seen = await refusals(reason);
      assert.ok(
        seen.logged >= 1,
        `the reason ${reason} is logged: ${JSON.stringify((await t.logEntries()).filter((e) => e.id === 'sso/saml-refused').at(-1)?.data)}`,
      );
      assert.ok(seen.audited >= 1, `the reason ${reason} is audited`);
      assert.equal((await t.logEntries()).filter((e) => e.level === 'error').length, 0, 'no error logged');
    };
    const base = (email: string, inResponseTo?: string) => ({ email, acsUrl: org.acsUrl, audience: org.entityId, inResponseTo });

    describe('domains', () => {
      it('are not for a personal organization, nor a SAML connection or SCIM tokens: 409 reason personal', async () => {
        const owner = await account(t);
        const orgs = await as(t, owner, 'GET', '/api/orgs');
        const personal = (orgs.body.organizations as Array<{ id: string; personal: boolean }>).find((o) => o.personal)!.id;
        const attempts: Array<[string, string, unknown]> = [
          ['POST', `/api/orgs/${personal}/domains`, { domain: uniqueDomain() }],
          ['PUT', `/api/orgs/${personal}/sso/saml`, { 'metadata-xml': org.idp.metadata }],
          ['POST', `/api/orgs/${personal}/scim-tokens`, { name: 'Okta' }],
        ];
        for (const [method, path, body] of attempts) {
          const res = await as(t, owner, method, path, body);
          assert.deepEqual([res.status, res.body.reason], [409, 'personal'], `${method} ${path}: ${res.text}`);
        }
        // a domain claimed before the rule is never verified
        const old = await t.system.database.db
          .insertInto('org_domain')
          .values({ organization_id: personal, domain: uniqueDomain(), txt_value: 'saas-domain-verification=x' })
          .returning('id')
          .executeTakeFirstOrThrow();
        const verify = await as(t, owner, 'POST', `/api/orgs/${personal}/domains/${old.id}/verify`);
        assert.deepEqual([verify.status, verify.body.reason], [409, 'personal'], verify.text);
        for (const table of ['saml_connection', 'scim_token'] as const) {
          assert.equal(
            (await t.system.database.db.selectFrom(table).select('organization_id').where('organization_id', '=', personal).execute()).length,
            0,
            table,
          );
        }
      });

      it('are claimed by admins, verified by the TXT record, and belong to one organization', async () => {
        const owner = await account(t);
        const member = await account(t);
        const orgId = await createOrg(t, owner, 'Domains');
        await addMember(t, orgId, owner, member, 'member');
        const domain = uniqueDomain();
        assert.equal((await as(t, member, 'POST', `/api/orgs/${orgId}/domains`, { domain })).status, 403);
        assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/domains`, { domain: 'not a domain' })).status, 400);
        const added = await as(t, owner, 'POST', `/api/orgs/${orgId}/domains`, { domain: `${domain.toUpperCase()}.` });
        assert.equal(added.status, 201, added.text);
        assert.equal(added.body.domain, domain);
        assert.equal(added.body.verified, false);
        assert.equal(added.body['txt-name'], `_saas-verification.${domain}`);
        assert.match(added.body['txt-value'], /^saas-domain-verification=[A-Za-z0-9_-]{32}$/);
        assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/domains`, { domain })).status, 409);

        const verifyPath = `/api/orgs/${orgId}/domains/${added.body.id}/verify`;
        const early = await as(t, owner, 'POST', verifyPath);
        assert.equal(early.status, 409);
        assert.equal(early.body.type, 'domain-not-verified');
        dns.txt.set(added.body['txt-name'], ['v=spf1 -all', 'saas-domain-verification=wrong']);
        assert.equal((await as(t, owner, 'POST', verifyPath)).body.type, 'domain-not-verified');

        // another organization claims it before the verification: allowed, but only one verifies
        const rival = await account(t);
        const rivalOrg = await createOrg(t, rival, 'Rival');
        const rivalAdded = await as(t, rival, 'POST', `/api/orgs/${rivalOrg}/domains`, { domain });
        assert.equal(rivalAdded.status, 201);

        dns.txt.set(added.body['txt-name'], ['v=spf1 -all', added.body['txt-value']]);
        const verified = await as(t, owner, 'POST', verifyPath);
        assert.equal(verified.status, 200, verified.text);
        assert.equal(verified.body.verified, true);

        dns.txt.set(rivalAdded.body['txt-name'], [rivalAdded.body['txt-value']]);
        const taken = await as(t, rival, 'POST', `/api/orgs/${rivalOrg}/domains/${rivalAdded.body.id}/verify`);
        assert.equal(taken.status, 409);
        assert.equal(taken.body.type, 'domain-taken');
        const again = await as(t, rival, 'POST', `/api/orgs/${rivalOrg}/domains`, { domain: uniqueDomain() });
        assert.equal(again.status, 201);
        const claimVerified = await as(t, await account(t), 'POST', `/api/orgs/${await createOrg(t, rival, 'Third')}/domains`, { domain });
        assert.equal(claimVerified.status, 404, 'not a member of that organization');
        const third = await createOrg(t, rival, 'Third bis');
        const refusedAdd = await as(t, rival, 'POST', `/api/orgs/${third}/domains`, { domain });
        assert.equal(refusedAdd.status, 409);
        assert.equal(refusedAdd.body.type, 'domain-taken');

        const list = await as(t, member, 'GET', `/api/orgs/${orgId}/domains`);
        assert.equal(list.status, 403);
        const listed = await as(t, owner, 'GET', `/api/orgs/${orgId}/domains`);
        assert.deepEqual(
          listed.body.domains.map((d: { domain: string; verified: boolean }) => [d.domain, d.verified]),
          [[domain, true]],
        );
        assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${orgId}/domains/${added.body.id}`)).status, 204);
        assert.equal((await as(t, owner, 'GET', `/api/orgs/${orgId}/domains`)).body.domains.length, 0);
      });
    });

    describe('connection', () => {
      it('is {connection: null} before one is set up and after it is removed: a normal state, not a 404', async () => {
        const owner = await account(t);
        const orgId = await createOrg(t, owner, 'Not yet');
        const none = await as(t, owner, 'GET', `/api/orgs/${orgId}/sso/saml`);
        assert.equal(none.status, 200, none.text);
        assert.deepEqual(none.body, { connection: null });
        const idp = await makeIdp();
        assert.equal((await as(t, owner, 'PUT', `/api/orgs/${orgId}/sso/saml`, { 'metadata-xml': idp.metadata })).status, 200);
        assert.equal((await as(t, owner, 'GET', `/api/orgs/${orgId}/sso/saml`)).body.connection['idp-entity-id'], idp.entityId);
        assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${orgId}/sso/saml`)).status, 204);
        assert.deepEqual((await as(t, owner, 'GET', `/api/orgs/${orgId}/sso/saml`)).body, { connection: null });
        // removing what is not there is still a 404, and so is an organization that does not exist
        assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${orgId}/sso/saml`)).body.type, 'sso-not-configured');
        const missing = await as(t, owner, 'GET', '/api/orgs/00000000-0000-4000-8000-000000000000/sso/saml');
        assert.equal(missing.status, 404, missing.text);
        assert.notEqual(missing.body.connection, null);
      });

      it('refuses garbage and hostile metadata with a 400, never a 500', async () => {
        const idp = await makeIdp();
        const bad = [
          'not xml at all',
          '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x">',
          `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>${idp.metadata.replace(/^<\?xml[^>]*\?>/, '')}`,
          '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><x>&xxe;</x>',
          '<root xmlns="urn:other"><child/></root>',
          idp.metadata.replace(/<ds:X509Certificate>[^<]+</, '<ds:X509Certificate>bm90IGEgY2VydGlmaWNhdGU=<'),
          idp.metadata.replace(
            /Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="[^"]+"/,
            'Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="javascript:alert(1)"',
          ),
          idp.metadata.replace(/<md:KeyDescriptor[\s\S]*<\/md:KeyDescriptor>/, ''),
        ];
        for (const xml of bad) {
          const res = await as(t, org.owner, 'PUT', `/api/orgs/${org.orgId}/sso/saml`, { 'metadata-xml': xml });
          assert.equal(res.status, 400, `${xml.slice(0, 60)}: ${res.text}`);
          assert.ok(res.body.errors[0].message.length > 0);
        }
        const current = await as(t, org.owner, 'GET', `/api/orgs/${org.orgId}/sso/saml`);
        assert.equal(current.status, 200);
        assert.equal(current.body.connection['idp-entity-id'], org.idp.entityId);
      });

      it('shows our values and the certificate expiry to owners only; the SP metadata is public XML', async () => {
        const res = await as(t, org.owner, 'GET', `/api/orgs/${org.orgId}/sso/saml`);
        assert.equal(res.status, 200);
        assert.equal(res.body.connection['acs-url'], `${t.system.config.appUrl}/api/sso/saml/${org.orgId}/acs`);
        assert.equal(res.body.connection['sp-entity-id'], `${t.system.config.appUrl}/api/sso/saml/${org.orgId}`);
        assert.ok(Date.parse(res.body.connection['certificate-expires-at']) > Date.now() + 300 * 86400_000);
        const admin = await account(t);
        await addMember(t, org.orgId, org.owner, admin, 'admin');
        assert.equal((await as(t, admin, 'GET', `/api/orgs/${org.orgId}/sso/saml`)).status, 403);
        const metadata = await t.client('GET', `/api/sso/saml/${org.orgId}/metadata`, { headers: { accept: '*/*' } });
        assert.equal(metadata.status, 200);
        assert.match(String(metadata.headers['content-type']), /xml/);
        assert.ok(metadata.text.includes(`entityID="${org.entityId}"`));
        assert.ok(metadata.text.includes(`Location="${org.acsUrl}"`));
        assert.equal((await t.client('GET', '/api/sso/saml/00000000-0000-4000-8000-000000000000/metadata', { headers: { accept: '*/*' } })).status, 404);
      });
    });

    describe('sign-on', () => {
      it('answers 404 sso-not-configured for an address without a verified domain and a connection', async () => {
        const res = await t.client('POST', '/api/auth/sso/start', { body: { email: 'someone@nowhere.example' } });
        assert.equal(res.status, 404);
        assert.equal(res.body.type, 'sso-not-configured');
      });

      it('signs a new person in: account with a verified address, membership with the default role, refresh cookie, 302 to /account', async () => {
        const email = `alice@${org.domain}`;
        const requestId = await startSso(t, email.toUpperCase());
        const res = await postAcs(t, org.orgId, responseXml(org.idp, base(email, requestId)));
        assert.equal(res.status, 302, res.text);
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`);
        const refresh = cookiesOf(res)[REFRESH_COOKIE];
        assert.ok(refresh?.value, 'the refresh cookie is set');
        const session = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': decodeURIComponent(refresh.value) } });
        assert.equal(session.status, 200, session.text);
        assert.equal(session.body.account.email, email);
        assert.equal(session.body.account['email-verified'], true);
        assert.equal(session.body.account.name, 'Alice Example');
        const log = await t.logText();
        assert.ok(!log.includes('PHNhbWxwOlJlc3BvbnNl'), 'no base64 of <samlp:Response in the log');
        const members = await as(t, org.owner, 'GET', `/api/orgs/${org.orgId}/members`);
        const alice = members.body.members.find((m: { email: string }) => m.email === email);
        assert.equal(alice.role, 'member');
      });

      it('signs the response instead of the assertion just as well', async () => {
        const email = `resp@${org.domain}`;
        const requestId = await startSso(t, email);
        const res = await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, requestId), sign: 'response' }));
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`, String(res.headers.location));
      });

      it('refuses an unsigned response, which does not use up the request it names: the genuine answer still signs in', async () => {
        const requestId = await startSso(t, `u@${org.domain}`);
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, { ...base(`u@${org.domain}`, requestId), sign: 'none' })), 'signature');
        const genuine = await postAcs(t, org.orgId, responseXml(org.idp, base(`u@${org.domain}`, requestId)));
        assert.equal(genuine.headers.location, `${t.system.config.appUrl}/account`, String(genuine.headers.location));
      });

      it('refuses a response signed by another key', async () => {
        const other = await makeIdp();
        const requestId = await startSso(t, `k@${org.domain}`);
        await assertRefused(
          await postAcs(t, org.orgId, responseXml(org.idp, { ...base(`k@${org.domain}`, requestId), signingKey: other.privateKey })),
          'signature',
        );
      });

      it('refuses an assertion altered after signing', async () => {
        const requestId = await startSso(t, `victim@${org.domain}`);
        const signed = responseXml(org.idp, base(`mallory@${org.domain}`, requestId));
        await assertRefused(await postAcs(t, org.orgId, signed.replace(`mallory@${org.domain}`, `victim@${org.domain}`)), 'signature');
      });

      it('refuses signature wrapping: a forged assertion beside the signed one moved out of the way', async () => {
        const requestId = await startSso(t, `w@${org.domain}`);
        const opts = base(`mallory@${org.domain}`, requestId);
        const signedAssertion = sign(assertionXml(org.idp, { ...opts, assertionId: '_signed1' }), org.idp.privateKey, org.idp.certificate, 'Assertion');
        const forged = assertionXml(org.idp, { ...opts, email: `ceo@${org.domain}`, assertionId: '_signed1' });
        // the forged assertion where the consumer reads, the signed one hidden in Extensions
        const xml = responseXml(org.idp, { ...opts, sign: 'none' }, forged).replace(
          '<samlp:Status>',
          `<samlp:Extensions>${signedAssertion}</samlp:Extensions><samlp:Status>`,
        );
        const res = await postAcs(t, org.orgId, xml);
        assert.equal(res.status, 302);
        assert.match(String(res.headers.location), FAILED);
        assert.equal(cookiesOf(res)[REFRESH_COOKIE], undefined);
        // and the signed assertion's signature over another element (the forged one embedding it)
        const requestId2 = await startSso(t, `w2@${org.domain}`);
        const opts2 = base(`mallory@${org.domain}`, requestId2);
        const signed2 = sign(assertionXml(org.idp, { ...opts2, assertionId: '_signed2' }), org.idp.privateKey, org.idp.certificate, 'Assertion');
        const forged2 = assertionXml(org.idp, { ...opts2, email: `ceo@${org.domain}`, assertionId: '_forged2' }).replace(
          '<saml:Subject>',
          `<saml:Advice>${signed2}</saml:Advice><saml:Subject>`,
        );
        const res2 = await postAcs(t, org.orgId, responseXml(org.idp, { ...opts2, sign: 'none' }, forged2));
        await assertRefused(res2, 'signature');
        const ceo = await t.system.database.db.selectFrom('account').select('id').where('email', '=', `ceo@${org.domain}`).executeTakeFirst();
        assert.equal(ceo, undefined, 'no account for the forged subject');
      });

      it('refuses an expired assertion, and one not yet valid beyond the 2 minutes of skew', async () => {
        const requestId = await startSso(t, `e@${org.domain}`);
        const past = { notBefore: new Date(Date.now() - 3600_000), notOnOrAfter: new Date(Date.now() - 3 * 60_000) };
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, { ...base(`e@${org.domain}`, requestId), ...past })), 'expired');
        const requestId2 = await startSso(t, `e@${org.domain}`);
        const future = { notBefore: new Date(Date.now() + 5 * 60_000), notOnOrAfter: new Date(Date.now() + 10 * 60_000) };
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, { ...base(`e@${org.domain}`, requestId2), ...future })), 'expired');
      });

      it('refuses a replayed response, and a replayed assertion id under a new request', async () => {
        const email = `replay@${org.domain}`;
        const requestId = await startSso(t, email);
        const xml = responseXml(org.idp, { ...base(email, requestId), assertionId: '_replayed-assertion' });
        assert.equal((await postAcs(t, org.orgId, xml)).headers.location, `${t.system.config.appUrl}/account`);
        await assertRefused(await postAcs(t, org.orgId, xml), 'unknown-request');
        const requestId2 = await startSso(t, email);
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, requestId2), assertionId: '_replayed-assertion' })), 'replayed');
      });

      it('refuses another audience, another issuer, another recipient and another destination', async () => {
        const email = `a@${org.domain}`;
        await assertRefused(
          await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, await startSso(t, email)), audience: 'https://other.example/sp' })),
          'audience',
        );
        await assertRefused(
          await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, await startSso(t, email)), issuer: 'https://evil.example/idp' })),
          'issuer',
        );
        await assertRefused(
          await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, await startSso(t, email)), recipient: 'https://other.example/acs' })),
          'recipient',
        );
        await assertRefused(
          await postAcs(t, org.orgId, responseXml(org.idp, { ...base(email, await startSso(t, email)), destination: 'https://other.example/acs' })),
          'destination',
        );
      });

      it('refuses an unsolicited (IdP-initiated) response and one answering no request of ours', async () => {
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, base(`i@${org.domain}`))), 'unsolicited');
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, base(`i@${org.domain}`, '_not-ours'))), 'unknown-request');
      });

      it("refuses an address outside the organization's verified domains, and a request of another organization", async () => {
        const requestId = await startSso(t, `x@${org.domain}`);
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, base('boss@example.com', requestId))), 'domain-not-verified');
        const other = await ssoOrg(t, dns);
        const theirs = await startSso(t, `y@${other.domain}`);
        await assertRefused(await postAcs(t, org.orgId, responseXml(org.idp, base(`y@${org.domain}`, theirs))), 'unknown-request');
      });

      it('refuses a DOCTYPE, garbage and an oversized response without a 500', async () => {
        const requestId = await startSso(t, `d@${org.domain}`);
        const xml = responseXml(org.idp, base(`d@${org.domain}`, requestId));
        await assertRefused(await postAcs(t, org.orgId, `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${xml}`), 'doctype');
        await assertRefused(await postAcs(t, org.orgId, 'this is not xml'), 'malformed');
        await assertRefused(await postAcs(t, org.orgId, `<x>${'a'.repeat(200_000)}</x>`), 'too-large');
        const huge = await postAcs(t, org.orgId, `<x>${'a'.repeat(400_000)}</x>`);
        assert.equal(huge.status, 413, 'beyond the body limit');
        assert.equal(cookiesOf(huge)[REFRESH_COOKIE], undefined);
      });
    });

    describe('bounded work', () => {
      /** a genuine, signed response for `email` with `padding` put in the Response's Extensions, outside the signed assertion */
      const padded = (email: string, requestId: string, padding: string) =>
        responseXml(org.idp, base(email, requestId)).replace(
          '</saml:Issuer><samlp:Status>',
          `</saml:Issuer><samlp:Extensions>${padding}</samlp:Extensions><samlp:Status>`,
        );

      it('refuses a response of 45,000 empty elements, and one nested too deep, before parsing; the server answers on, and the request stays usable', async () => {
        const email = `wide@${org.domain}`;
        const requestId = await startSso(t, email);
        const wide = padded(email, requestId, '<x/>'.repeat(45_000));
        assert.ok(Buffer.byteLength(wide) < 192 * 1024, 'under the byte limit: only the element count refuses it');
        const before = (await refusals('too-large')).audited;
        await assertRefused(await postAcs(t, org.orgId, wide), 'too-large');
        assert.equal((await refusals('too-large')).audited, before + 1);
        assert.equal((await t.client('GET', '/api/health/live')).status, 200, 'the server answers the next request');
        // 5,000 elements in all, but 100 levels deep
        await assertRefused(await postAcs(t, org.orgId, padded(email, requestId, `${'<x>'.repeat(100)}${'</x>'.repeat(100)}`)), 'too-large');
        assert.equal((await refusals('too-large')).audited, before + 2);
        // a few thousand elements is within the bounds: the genuine answer still signs in
        const genuine = await postAcs(t, org.orgId, padded(email, requestId, '<x/>'.repeat(1_000)));
        assert.equal(genuine.headers.location, `${t.system.config.appUrl}/account`, String(genuine.headers.location));
      });
    });

    describe('accounts', () => {
      it('links an existing verified account and makes it a member', async () => {
        const existing = await account(t, { email: `bob@${org.domain}` });
        const requestId = await startSso(t, existing.email);
        const res = await postAcs(t, org.orgId, responseXml(org.idp, base(existing.email, requestId)));
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`);
        const members = await as(t, org.owner, 'GET', `/api/orgs/${org.orgId}/members`);
        assert.ok(members.body.members.some((m: { 'account-id': string }) => m['account-id'] === existing.id));
      });

      it("proves an unverified account's address for the first time: its earlier sessions and its password end, and it is signed in at /account, no token in the URL", async () => {
        const email = `carol@${org.domain}`;
        const { id } = await signUp(t.client, email);
        const earlier = await logIn(t.client, email);
        assert.equal(earlier.status, 200);
        const requestId = await startSso(t, email);
        const res = await postAcs(t, org.orgId, responseXml(org.idp, base(email, requestId)));
        assert.equal(res.status, 302, res.text);
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`, 'signed in as any SAML sign-in: no reset token in the URL');
        const refresh = cookiesOf(res)[REFRESH_COOKIE];
        assert.ok(refresh?.value, 'the refresh cookie is set');
        const row = await t.system.database.db.selectFrom('account').select(['email_verified', 'password_hash']).where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(row.email_verified, true);
        assert.equal(row.password_hash, null, 'the password set before the proof is gone');
        assert.equal((await logIn(t.client, email)).status, 401, 'it signs nobody in');
        const stale = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': earlier.body['refresh-token'] } });
        assert.equal(stale.status, 401, 'the session opened before the proof ended');
        const resets = await t.system.database.db
          .selectFrom('action_token')
          .select('id')
          .where('account_id', '=', id)
          .where('purpose', '=', 'reset-password')
          .where('used_at', 'is', null)
          .execute();
        assert.deepEqual(resets, [], 'an assertion leaves no reset token');

        // the session the assertion began: the account page reads that there is no password, and one is set with this sign-in
        const session = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': decodeURIComponent(refresh.value) } });
        assert.equal(session.status, 200, session.text);
        const bearer = { authorization: `Bearer ${session.body['access-token']}` };
        const methods = await t.client('GET', '/api/account/identities', { headers: bearer });
        assert.equal(methods.status, 200, methods.text);
        assert.equal(methods.body['has-password'], false, 'the security page offers to set one (SignInMethods, src/client/oidc/pages.tsx)');
        const set = await t.client('POST', '/api/account/change-password', { headers: bearer, body: { password: "carol's own passphrase" } });
        assert.equal(set.status, 204, set.text);
        assert.equal((await logIn(t.client, email, "carol's own passphrase")).status, 200);
        // a later sign-on is no first proof: straight to the account
        const again = await postAcs(t, org.orgId, responseXml(org.idp, base(email, await startSso(t, email))));
        assert.equal(again.headers.location, `${t.system.config.appUrl}/account`);
      });
    });

    describe('two-factor', () => {
      it("does not let SAML stand in for an account's second factor: the second step follows, the mfa-token in the fragment only", async () => {
        const person = await account(t, { email: `totp@${org.domain}` });
        const bearer = { authorization: `Bearer ${person.token}` };
        const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer, body: {} });
        assert.equal(setup.status, 200, setup.text);
        await awayFromStepEdge();
        const enabled = await t.client('POST', '/api/account/2fa/enable', {
          headers: bearer,
          body: { code: totpCode(setup.body.secret, -1), password: PASSWORD },
        });
        assert.equal(enabled.status, 200, enabled.text);
        const requestId = await startSso(t, person.email);
        const res = await postAcs(t, org.orgId, responseXml(org.idp, base(person.email, requestId)));
        assert.equal(res.status, 302);
        const url = new URL(String(res.headers.location));
        assert.equal(
          `${url.origin}${url.pathname}${url.search}`,
          `${t.system.config.appUrl}/log-in/two-factor`,
          'nothing in the query: a fragment never reaches a server or a log',
        );
        assert.equal(cookiesOf(res)[REFRESH_COOKIE], undefined, 'no session before the second factor');
        const token = new URLSearchParams(url.hash.slice(1)).get('mfa-token');
        assert.ok(token, 'the mfa-token is in the fragment');
        const wrong = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': token, code: '000000' } });
        assert.equal(wrong.status, 401, 'the second factor is asked for, not waved through');
        const done = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': token, code: totpCode(setup.body.secret) } });
        assert.equal(done.status, 200, done.text);
        assert.equal(done.body.account.id, person.id);
      });
    });

    describe('enforcement', () => {
      it("refuses password log-in to the domain's accounts (403 sso-required); owners keep theirs", async () => {
        const enforced = await ssoOrg(t, dns);
        const boss = await account(t, { email: `boss@${enforced.domain}` });
        await addMember(t, enforced.orgId, enforced.owner, boss, 'owner');
        const worker: TestAccount = await account(t, { email: `worker@${enforced.domain}` });
        await addMember(t, enforced.orgId, enforced.owner, worker, 'member');
        const put = await as(t, enforced.owner, 'PUT', `/api/orgs/${enforced.orgId}/sso/saml`, { 'metadata-xml': enforced.idp.metadata, enforced: true });
        assert.equal(put.body.enforced, true);
        const refused = await logIn(t.client, worker.email);
        assert.equal(refused.status, 403, refused.text);
        assert.equal(refused.body.type, 'sso-required');
        assert.equal((await logIn(t.client, boss.email)).status, 200, 'an owner keeps the password');
        // not enforced: the same kind of account logs in
        const free = await account(t, { email: `free@${org.domain}` });
        assert.equal((await logIn(t.client, free.email)).status, 200);
        // and SSO itself still signs the worker in
        const requestId = await startSso(t, worker.email);
        const res = await postAcs(
          t,
          enforced.orgId,
          responseXml(enforced.idp, { email: worker.email, acsUrl: enforced.acsUrl, audience: enforced.entityId, inResponseTo: requestId }),
        );
        assert.equal(res.headers.location, `${t.system.config.appUrl}/account`);
      });

      it("keeps the domain's accounts inside its domains: a move out is 403 sso-required, asked or confirmed; owners may", async () => {
        const enforced = await ssoOrg(t, dns);
        const boss = await account(t, { email: `boss@${enforced.domain}` });
        await addMember(t, enforced.orgId, enforced.owner, boss, 'owner');
        const worker = await account(t, { email: `worker@${enforced.domain}` });
        await addMember(t, enforced.orgId, enforced.owner, worker, 'member');
        const changeEmail = (who: TestAccount, newEmail: string) =>
          t.client('POST', '/api/account/change-email', {
            headers: { authorization: `Bearer ${who.token}` },
            body: { password: PASSWORD, 'new-email': newEmail },
          });
        // asked before the organization enforced SSO, confirmed after
        const early = `worker-early-${Date.now()}@elsewhere.example`;
        assert.equal((await changeEmail(worker, early)).status, 202);
        const put = await as(t, enforced.owner, 'PUT', `/api/orgs/${enforced.orgId}/sso/saml`, { 'metadata-xml': enforced.idp.metadata, enforced: true });
        assert.equal(put.body.enforced, true);

        const moved = await changeEmail(worker, `worker-${Date.now()}@elsewhere.example`);
        assert.deepEqual([moved.status, moved.body.type], [403, 'sso-required'], moved.text);
        const { token } = await mailedLink(t.system, early, 'confirm-email-change');
        const confirmed = await t.client('POST', '/api/account/confirm-email', { body: { token } });
        assert.deepEqual([confirmed.status, confirmed.body.type], [403, 'sso-required'], confirmed.text);
        const row = await t.system.database.db.selectFrom('account').select('email').where('id', '=', worker.id).executeTakeFirstOrThrow();
        assert.equal(row.email, worker.email, 'the address stays in the domain');
        assert.equal((await changeEmail(boss, `boss-${Date.now()}@elsewhere.example`)).status, 202, 'an owner may move');
      });
    });

    describe('certificate expiry', () => {
      it('emails the owners once when the IdP certificate expires within 30 days', async () => {
        const owner = await account(t);
        const orgId = await createOrg(t, owner, 'Expiring');
        const domain = uniqueDomain();
        await verifiedDomain(t, dns, owner, orgId, domain);
        const idp = await makeIdp({ notAfter: new Date(Date.now() + 10 * 86400_000) });
        const put = await as(t, owner, 'PUT', `/api/orgs/${orgId}/sso/saml`, { 'metadata-xml': idp.metadata });
        assert.equal(put.status, 200);
        const { expiry } = t.system.services(ssoModule);
        await expiry.runOnce();
        await expiry.runOnce();
        const mails = await t.system.mail.mailbox.list({ to: owner.email, kind: 'sso-certificate-expiring' });
        assert.equal(mails.length, 1);
      });
    });
  });
}
