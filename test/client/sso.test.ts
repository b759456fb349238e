/**
 * The Single sign-on page's and "Sign in with SSO"'s events against a fake transport: the route
 * and the admins' navigation item; what each role loads; a domain added, refused verification
 * beside its field, verified; the SAML connection saved (metadata problems beside the field);
 * a SCIM token shown once; Sign in with SSO navigates to the IdP or says SSO is not set up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { transitJson } from '../../src/shared/codecs.js';
import { registerApp, routeOf, type Account, type AppState } from '../../src/client/app.js';
import { EventCore, type EventVector } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { registerSso, ssoOrgIdOf, type OrgDomain, type SamlConnection } from '../../src/client/sso/events.js';
import { sso } from '../../src/client/sso/feature.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const DOMAIN = '00000000-0000-4000-8000-0000000000dd';
const account: Account = {
  id: '7d1a3c1e-1111-4c1e-9a3b-000000000001',
  email: 'ada@example.test',
  name: 'Ada',
  'created-at': '2026-01-01T00:00:00.000Z',
  subscription: { status: 'none', plan: null, 'current-period-end': null },
  'email-verified': true,
};
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
const ok = (body: unknown, status = 200): TransportResponse => ({ status, contentType: transitJson.mime, text: transitJson.encode(body) });
const call = (r: TransportRequest) => `${r.method.toUpperCase()} ${new URL(r.url, 'http://x').pathname}`;

function setup(role = 'owner') {
  let domains: OrgDomain[] = [];
  let saml: SamlConnection | undefined;
  let txtReady = false;
  const requests: TransportRequest[] = [];
  const assigned: string[] = [];
  const core = new EventCore<AppState>({ route: 'org-sso', toasts: [], busy: false, ready: true, token: 'access-1', account });
  registerApp(
    core,
    {
      transport: async (req) => {
        requests.push(req);
        const body = req.body ? (transitJson.decode(req.body) as Record<string, unknown>) : {};
        switch (call(req)) {
          case `GET /api/orgs/${ORG}`:
            return ok(org(role));
          case `GET /api/orgs/${ORG}/domains`:
            return ok({ domains });
          case `POST /api/orgs/${ORG}/domains`:
            domains = [domain];
            return ok(domain, 201);
          case `POST /api/orgs/${ORG}/domains/${DOMAIN}/verify`:
            if (!txtReady) return ok({ type: 'domain-not-verified', message: 'No TXT record holds the value yet' }, 409);
            domains = [{ ...domain, verified: true }];
            return ok(domains[0]);
          case `GET /api/orgs/${ORG}/sso/saml`:
            return ok({ connection: saml ?? null });
          case `PUT /api/orgs/${ORG}/sso/saml`:
            if (body['metadata-xml'] === 'junk') {
              return ok(
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
            return ok(saml);
          case `GET /api/orgs/${ORG}/scim-tokens`:
            return ok({ tokens: [] });
          case `POST /api/orgs/${ORG}/scim-tokens`:
            return ok(
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
              ? ok({ url: 'https://idp.example/sso?SAMLRequest=x' })
              : ok({ type: 'sso-not-configured', message: 'none' }, 404);
          default:
            return ok({ type: 'not-found', message: 'no such route' }, 404);
        }
      },
      csrfToken: () => 'csrf-1',
    },
    () => undefined,
  );
  registerSso(core);
  core.regFx('location/assign', (url: string) => assigned.push(url));
  const run = async (event: EventVector) => {
    core.dispatch(event);
    await sleep(30);
  };
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
    assert.equal(item.path!(as('admin')), `/orgs/${ORG}/sso`);
    assert.equal(item.path!(as('member')), undefined);
  });

  it('loads domains for an admin, and the connection and tokens for an owner only', async () => {
    const admin = setup('admin');
    await admin.run(['sso/open', ORG]);
    assert.deepEqual(admin.requests.map(call).sort(), [`GET /api/orgs/${ORG}`, `GET /api/orgs/${ORG}/domains`].sort());
    const owner = setup('owner');
    await owner.run(['sso/open', ORG]);
    assert.equal(owner.page().connection, null, 'none set up');
    assert.deepEqual(owner.page().tokens, []);
  });

  it('adds a domain, says why verification failed beside the field, then verifies it', async () => {
    const s = setup();
    await s.run(['sso/open', ORG]);
    await s.run(['sso/add-domain', { domain: ' acme.example ' }]);
    const posted = s.requests.filter((r) => call(r) === `POST /api/orgs/${ORG}/domains`).at(-1)!;
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
    const put = s.requests.filter((r) => call(r) === `PUT /api/orgs/${ORG}/sso/saml`).at(-1)!;
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
