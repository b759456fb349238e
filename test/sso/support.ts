/**
 * SSO test support: a SAML identity provider (a generated key and certificate; responses signed
 * with xml-crypto, the library node-saml verifies with), a DNS server (dns2) answering TXT
 * questions as the test says, and organizations with a verified domain and a connection.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import dns2 from 'dns2';
import { generate } from 'selfsigned';
import { SignedXml } from 'xml-crypto';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import type { TestSystem } from '../support/system.js';

export const IDP_SSO_URL = 'https://idp.example.test/app/sso/saml';

export interface TestIdp {
  entityId: string;
  certificate: string;
  privateKey: string;
  metadata: string;
}

const b64 = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

export async function makeIdp(options: { entityId?: string; notAfter?: Date } = {}): Promise<TestIdp> {
  const pems = await generate([{ name: 'commonName', value: 'Test IdP' }], {
    keySize: 2048,
    algorithm: 'sha256',
    ...(options.notAfter ? { notAfterDate: options.notAfter } : {}),
  });
  const entityId = options.entityId ?? `https://idp.example.test/${randomBytes(4).toString('hex')}`;
  const metadata = `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${b64(pems.cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${IDP_SSO_URL}"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${IDP_SSO_URL}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
  return { entityId, certificate: pems.cert, privateKey: pems.private, metadata };
}

export interface ResponseOptions {
  email: string;
  acsUrl: string;
  audience: string;
  inResponseTo?: string;
  issuer?: string;
  destination?: string;
  recipient?: string;
  assertionId?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** what is signed: the assertion (default), the whole response, or nothing */
  sign?: 'assertion' | 'response' | 'none';
  /** another key than the IdP's */
  signingKey?: string;
}

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const XMLNS = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';

export function assertionXml(idp: TestIdp, o: ResponseOptions): string {
  const now = Date.now();
  const notBefore = iso(o.notBefore ?? new Date(now - 60_000));
  const notOnOrAfter = iso(o.notOnOrAfter ?? new Date(now + 5 * 60_000));
  const inResponseTo = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? `_a${randomUUID()}`}" Version="2.0" IssueInstant="${iso(new Date(now))}">` +
    `<saml:Issuer>${o.issuer ?? idp.entityId}</saml:Issuer>` +
    '<saml:Subject>' +
    `<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.email}</saml:NameID>` +
    '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">' +
    `<saml:SubjectConfirmationData${inResponseTo} NotOnOrAfter="${notOnOrAfter}" Recipient="${o.recipient ?? o.acsUrl}"/>` +
    '</saml:SubjectConfirmation></saml:Subject>' +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(new Date(now))}" SessionIndex="_s${randomBytes(6).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    '<saml:AttributeStatement><saml:Attribute Name="displayName"><saml:AttributeValue>Alice Example</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>' +
    '</saml:Assertion>'
  );
}

export function sign(xml: string, key: string, cert: string, element: 'Assertion' | 'Response'): string {
  const sig = new SignedXml({
    privateKey: key,
    publicCert: cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const path = element === 'Assertion' ? "//*[local-name(.)='Assertion']" : "/*[local-name(.)='Response']";
  sig.addReference({
    xpath: path,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { prefix: 'ds', location: { reference: `${path}/*[local-name(.)='Issuer']`, action: 'after' } });
  return sig.getSignedXml();
}

export function responseXml(idp: TestIdp, o: ResponseOptions, assertion?: string): string {
  const mode = o.sign ?? 'assertion';
  const key = o.signingKey ?? idp.privateKey;
  let inner = assertion ?? assertionXml(idp, o);
  if (mode === 'assertion') inner = sign(inner, key, idp.certificate, 'Assertion');
  const inResponseTo = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
  const xml =
    `<samlp:Response ${XMLNS} ID="_r${randomUUID()}" Version="2.0" IssueInstant="${iso(new Date())}" Destination="${o.destination ?? o.acsUrl}"${inResponseTo}>` +
    `<saml:Issuer>${o.issuer ?? idp.entityId}</saml:Issuer>` +
    '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
    inner +
    '</samlp:Response>';
  return mode === 'response' ? sign(xml, key, idp.certificate, 'Response') : xml;
}

/** The AuthnRequest's ID from the IdP URL `POST /api/auth/sso/start` answered. */
export function requestIdOf(url: string): string {
  const saml = new URL(url).searchParams.get('SAMLRequest');
  assert.ok(saml, 'the URL carries a SAMLRequest');
  const xml = inflateRawSync(Buffer.from(saml, 'base64')).toString('utf8');
  const id = / ID="([^"]+)"/.exec(xml)?.[1];
  assert.ok(id, 'the AuthnRequest has an ID');
  return id;
}

/** Posts a SAMLResponse to the ACS as an identity provider's page does (a cross-site form post). */
export function postAcs(t: TestSystem, orgId: string, xml: string | Buffer, extra: Record<string, string> = {}) {
  const form = new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: 'r', ...extra }).toString();
  return t.client('POST', `/api/sso/saml/${orgId}/acs`, {
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.example.test', 'sec-fetch-site': 'cross-site', accept: 'text/html' },
  });
}

export interface TestDns {
  server: string;
  /** TXT answers by name (lower-case) */
  txt: Map<string, string[]>;
  close(): Promise<void>;
}

/** A DNS server on 127.0.0.1 (UDP) answering TXT questions from `txt`. */
export async function dnsServer(): Promise<TestDns> {
  const { Packet } = dns2;
  const txt = new Map<string, string[]>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      if (question.type === Packet.TYPE.TXT) {
        for (const data of txt.get(question.name.toLowerCase()) ?? []) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: 0,
            data,
          } as unknown as (typeof response.answers)[number]);
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${addresses.udp!.port}`, txt, close: () => server.close() };
}

export const uniqueDomain = () => `acme${randomBytes(4).toString('hex')}.example`;

/** Adds `domain` to the organization and verifies it through the DNS server; asserts each step. */
export async function verifiedDomain(t: TestSystem, dns: TestDns, who: TestAccount, orgId: string, domain: string): Promise<string> {
  const added = await as(t, who, 'POST', `/api/orgs/${orgId}/domains`, { domain });
  assert.equal(added.status, 201, added.text);
  dns.txt.set(added.body['txt-name'], [added.body['txt-value']]);
  const verified = await as(t, who, 'POST', `/api/orgs/${orgId}/domains/${added.body.id}/verify`);
  assert.equal(verified.status, 200, verified.text);
  return added.body.id as string;
}

export interface SsoOrg {
  owner: TestAccount;
  orgId: string;
  domain: string;
  idp: TestIdp;
  acsUrl: string;
  entityId: string;
}

/** An organization with a verified domain and a SAML connection to a fresh test IdP. */
export async function ssoOrg(t: TestSystem, dns: TestDns, options: { enforced?: boolean; defaultRole?: 'member' | 'admin' } = {}): Promise<SsoOrg> {
  const owner = await account(t);
  const orgId = await createOrg(t, owner, 'Enterprise');
  const domain = uniqueDomain();
  await verifiedDomain(t, dns, owner, orgId, domain);
  const idp = await makeIdp();
  const put = await as(t, owner, 'PUT', `/api/orgs/${orgId}/sso/saml`, {
    'metadata-xml': idp.metadata,
    'default-role': options.defaultRole ?? 'member',
    enforced: options.enforced ?? false,
  });
  assert.equal(put.status, 200, put.text);
  return { owner, orgId, domain, idp, acsUrl: put.body['acs-url'], entityId: put.body['sp-entity-id'] };
}

/** Starts a sign-on for `email`: the AuthnRequest id to answer. */
export async function startSso(t: TestSystem, email: string): Promise<string> {
  const res = await t.client('POST', '/api/auth/sso/start', { body: { email } });
  assert.equal(res.status, 200, res.text);
  assert.ok(String(res.body.url).startsWith(`${IDP_SSO_URL}?`), res.body.url);
  return requestIdOf(res.body.url);
}
