/**
 * The Single sign-on page's and "Sign in with SSO"'s events against a fake transport: the route
 * and the admins' navigation item; what each role loads; a domain added, refused verification
 * beside its field, verified; the SAML connection saved (metadata problems beside the field);
 * a SCIM token shown once; Sign in with SSO navigates to the IdP or says SSO is not set up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { routeOf, type AppState } from '../../src/client/app.js';
import { registerSso, ssoOrgIdOf, type OrgDomain, type SamlConnection } from '../../src/client/sso/events.js';
import { registerSsoSignIn } from '../../src/client/sso/sign-in-events.js';
import { sso } from '../../src/client/sso/feature.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const DOMAIN = '00000000-0000-4000-8000-0000000000dd';
const org = (role: string) => ({ id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role });
const domain: OrgDomain = {
  id: DOMAIN,
  domain: 'acme.example',
  verified: false,
  'txt-name': '_saas-verification.acme.example',
  'txt-value': 'saas-domain-verification=x',
};
const connection: SamlConnection = {
  'sp-entity-id': `https://app.example/api/sso/saml/${ORG}`,
  'acs-url': `https://app.example/api/sso/saml/${ORG}/acs`,
  'sp-metadata-url': `https://app.example/api/sso/saml/${ORG}/metadata`,
  'idp-entity-id': 'https://idp.example',
  'idp-sso-url': 'https://idp.example/sso',
  'certificate-expires-at': '2030-01-01T00:00:00.000Z',
  'default-role': 'member',
  enforced: true,
};

function setup(role = 'owner') {
  let domains: OrgDomain[] = [];
  let saml: SamlConnection | undefined;
  let txtReady = false;
  const assigned: string[] = [];
  const { core, requests, run } = fakeClient('org-sso', (req) => {
    const body = req.body ? (transitJson.decode(req.body) as Record<string, unknown>) : {};
    switch (callOf(req)) {
      case `GET /api/orgs/${ORG}`:
        return answer(org(role));
      case `GET /api/orgs/${ORG}/domains`:
        return answer({ domains });
      case `POST /api/orgs/${ORG}/domains`:
        domains = [domain];
        return answer(domain, 201);
      case `POST /api/orgs/${ORG}/domains/${DOMAIN}/verify`:
        if (!txtReady) return answer({ type: 'domain-not-verified', message: 'No TXT record holds the value yet' }, 409);
        domains = [{ ...domain, verified: true }];
        return answer(domains[0]);
      case `GET /api/orgs/${ORG}/sso/saml`:
        return answer({ connection: saml ?? null });
      case `PUT /api/orgs/${ORG}/sso/saml`:
        if (body['metadata-xml'] === 'junk') {
          return answer(
            {
              type: 'request-coercion',
              message: 'Unusable identity provider metadata',
              in: 'body',
              errors: [{ path: '/metadata-xml', message: 'not well-formed XML' }],
            },
            400,
          );
        }
        saml = { ...connection, enforced: body.enforced as boolean };
        return answer(saml);
      case `GET /api/orgs/${ORG}/scim-tokens`:
        return answer({ tokens: [] });
      case `POST /api/orgs/${ORG}/scim-tokens`:
        return answer(
          {
            id: '00000000-0000-4000-8000-0000000000ee',
            name: body.name,
            'default-role': 'member',
            'created-at': '2026-01-01T00:00:00.000Z',
            'last-used-at': null,
            token: 'scim_secret',
          },
          201,
        );
      case 'POST /api/auth/sso/start':
        return String(body.email).endsWith('@acme.example')
          ? answer({ url: 'https://idp.example/sso?SAMLRequest=x' })
          : answer({ type: 'sso-not-configured', message: 'none' }, 404);
      default:
        return undefined;
    }
  });
  registerSso(core);
  registerSsoSignIn(core);
  core.regFx('location/assign', (url: string) => assigned.push(url));
  return {
    core,
    requests,
    assigned,
    run,
    page: () => core.state.ssoPage!,
    errors: (form: string) => core.state.fieldErrors?.[form],
    setTxt: () => {
      txtReady = true;
    },
  };
}

describe('client single sign-on events', () => {
  it('routes /orgs/<id>/sso and shows the navigation item to admins and owners only', () => {
    assert.equal(routeOf(`/orgs/${ORG}/sso`), 'org-sso');
    assert.equal(ssoOrgIdOf(`/orgs/${ORG}/sso`), ORG);
    const item = sso.nav!.find((n) => n.route === 'org-sso')!;
    const as = (role: 'owner' | 'admin' | 'member') =>
      ({ route: 'account', toasts: [], busy: false, ready: true, currentOrg: ORG, orgs: [{ ...org(role), role }] }) as unknown as AppState;
    assert.equal(item.path!(as('admin'), '/account'), `/orgs/${ORG}/sso`);
    assert.equal(item.path!(as('member'), '/account'), undefined);
  });

  it('loads domains for an admin, and the connection and tokens for an owner only', async () => {
    const admin = setup('admin');
    await admin.run(['sso/open', ORG]);
    assert.deepEqual(admin.requests.map(callOf).sort(), [`GET /api/orgs/${ORG}`, `GET /api/orgs/${ORG}/domains`].sort());
    const owner = setup('owner');
    await owner.run(['sso/open', ORG]);
    assert.equal(owner.page().connection, null, 'none set up');
    assert.deepEqual(owner.page().tokens, []);
  });

  it('adds a domain, says why verification failed beside the field, then verifies it', async () => {
    const s = setup();
    await s.run(['sso/open', ORG]);
    await s.run(['sso/add-domain', { domain: ' acme.example ' }]);
    const posted = s.requests.filter((r) => callOf(r) === `POST /api/orgs/${ORG}/domains`).at(-1)!;
    assert.deepEqual(transitJson.decode(posted.body!), { domain: 'acme.example' });
    assert.deepEqual(s.page().domains, [domain]);
    await s.run(['sso/verify-domain', DOMAIN]);
    assert.match(s.errors('add-domain')?.domain ?? '', /No TXT record/);
    assert.equal(s.core.state.busy, false);
    s.setTxt();
    await s.run(['sso/verify-domain', DOMAIN]);
    assert.equal(s.errors('add-domain'), undefined);
    assert.equal(s.page().domains?.[0].verified, true);
  });

  it('saves the connection (metadata problems beside the field) and shows a SCIM token once', async () => {
    const s = setup();
    await s.run(['sso/open', ORG]);
    await s.run(['sso/save-connection', { metadata: 'junk', role: 'member', enforced: false }]);
    assert.deepEqual(s.errors('saml-connection-form'), { 'metadata-xml': 'not well-formed XML' });
    await s.run(['sso/save-connection', { metadata: '<md:EntityDescriptor/>', role: 'admin', enforced: true }]);
    const put = s.requests.filter((r) => callOf(r) === `PUT /api/orgs/${ORG}/sso/saml`).at(-1)!;
    assert.deepEqual(transitJson.decode(put.body!), { 'metadata-xml': '<md:EntityDescriptor/>', 'default-role': 'admin', enforced: true });
    assert.equal(s.page().connection?.enforced, true);
    await s.run(['sso/create-token', { name: 'Okta', role: 'member' }]);
    assert.deepEqual(s.page().newToken, { name: 'Okta', token: 'scim_secret' });
    await s.run(['sso/open', ORG]);
    assert.equal(s.page().newToken, undefined, 'gone when the page is entered again');
    assert.equal(s.page().connection?.enforced, true, 'the connection read back from {connection}');
  });

  it('Sign in with SSO goes to the identity provider, or says SSO is not set up for the address', async () => {
    const s = setup();
    await s.run(['sso/start', { email: 'bob@acme.example' }]);
    assert.deepEqual(s.assigned, ['https://idp.example/sso?SAMLRequest=x']);
    await s.run(['sso/start', { email: 'bob@elsewhere.example' }]);
    assert.match(s.errors('sso-sign-in')?.email ?? '', /not set up/);
    assert.equal(s.core.state.busy, false);
  });
});
