/**
 * The ACS's checks of a posted SAMLResponse (docs/sso.md, "3. Signing in"): with
 * @node-saml/node-saml (signature of the response or assertion by the metadata's certificate,
 * InResponseTo of a live request, time window with 2 minutes of skew, audience) plus ours (size and
 * shape, no DTD, issuer, destination and recipient, an email of a verified domain of this
 * organization). The request and the assertion id are used up by the sign-in's transaction
 * (signon.ts). Every refusal is a {@link SsoRefused} with a reason code.
 */
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { normalizeEmail } from '../account/service.js';
import type { DB } from '../db/database.js';
import { EMAIL_NAME_ID, type ConnectionRow, type ServiceProviderUrls } from './connections.js';
import { domainOf, type DomainService } from './domains.js';
import { toPem } from './metadata.js';
import { MAX_RESPONSE_DEPTH, MAX_RESPONSE_ELEMENTS, responseShape } from './response-bounds.js';
import { nodeSaml } from './saml-library.js';

export const CLOCK_SKEW_MS = 2 * 60 * 1000;
/** the largest decoded SAMLResponse we read, bytes */
export const MAX_RESPONSE_BYTES = 192 * 1024;

/** Why a response was refused: the code in the log and the audit entry (docs/sso.md lists them). */
export type RefusalReason =
  | 'not-configured'
  | 'malformed'
  | 'doctype'
  | 'too-large'
  | 'unsolicited'
  | 'unknown-request'
  | 'signature'
  | 'expired'
  | 'audience'
  | 'issuer'
  | 'destination'
  | 'recipient'
  | 'replayed'
  | 'idp-error'
  | 'no-email'
  | 'domain-not-verified'
  | 'membership-suspended'
  | 'seat-limit'
  | 'invalid';

export class SsoRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'SsoRefused';
  }
}

/** What the checks need: the request lookup, our URLs, the organization's verified domains. */
export interface AssertionDeps {
  db: DB;
  urls: ServiceProviderUrls;
  domains: Pick<DomainService, 'isVerifiedFor'>;
  requestTtlMs: number;
}

/** What a validated response asserts: whom it signs in, and the ids its sign-in uses up. */
export interface ValidatedAssertion {
  email: string;
  name: string | null;
  /** the InResponseTo of the response: our request it answers */
  requestId: string;
  assertionId: string;
  /** how long the assertion id is kept to refuse a replay */
  keepUntil: Date;
}

/** node-saml's message for each check it makes, mapped to our reason codes. */
function reasonOf(message: string): RefusalReason {
  if (/InResponseTo is missing/i.test(message)) return 'unsolicited';
  if (/InResponseTo/i.test(message)) return 'unknown-request';
  if (/signature/i.test(message)) return 'signature';
  // node-saml drops subject confirmations outside their time window before saying so
  if (/expired|not yet valid|No valid subject confirmation/i.test(message)) return 'expired';
  if (/audience/i.test(message)) return 'audience';
  if (/SAML provider returned/i.test(message)) return 'idp-error';
  if (/not well-formed|parse|Missing SAML assertion|Unknown SAML/i.test(message)) return 'malformed';
  return 'invalid';
}

type XmlJs = Record<string, unknown> & { $?: Record<string, string>; _?: string };
const first = (node: unknown, key: string): XmlJs | undefined => {
  const list = (node as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(list) ? (list[0] as XmlJs) : undefined;
};
const all = (node: unknown, key: string): XmlJs[] => {
  const list = (node as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(list) ? (list as XmlJs[]) : [];
};

/** node-saml for one connection (loaded at the first sign-on); `cache` stores and uses up our requests for it. */
export async function samlFor(
  { urls, requestTtlMs }: Pick<AssertionDeps, 'urls' | 'requestTtlMs'>,
  connection: ConnectionRow,
  cache: CacheProvider,
): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await nodeSaml();
  const orgId = connection.organization_id;
  return new SAML({
    entryPoint: connection.idp_sso_url,
    issuer: urls.entityId(orgId),
    callbackUrl: urls.acsUrl(orgId),
    audience: urls.entityId(orgId),
    idpCert: connection.idp_certificates.map(toPem),
    idpIssuer: connection.idp_entity_id,
    identifierFormat: EMAIL_NAME_ID,
    // the response or the assertion must be signed (either is enough: IdPs differ)
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: requestTtlMs,
    disableRequestedAuthnContext: true,
    cacheProvider: cache,
  });
}

/** Validates a posted SAMLResponse for the organization's connection: what its signed assertion says, or a {@link SsoRefused}. */
export async function validateResponse(
  deps: AssertionDeps,
  organizationId: string,
  connection: ConnectionRow,
  samlResponse: string,
): Promise<ValidatedAssertion> {
  const xml = Buffer.from(samlResponse, 'base64');
  if (xml.length > MAX_RESPONSE_BYTES) throw new SsoRefused('too-large', `The SAMLResponse is larger than ${MAX_RESPONSE_BYTES} bytes`);
  const text = xml.toString('utf8');
  if (!/^\s*(<\?xml[^>]*\?>\s*)?</.test(text)) throw new SsoRefused('malformed', 'The SAMLResponse is not base64 of an XML document');
  // no DTD: no entity expansion or external entity can reach the parser
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new SsoRefused('doctype', 'The SAMLResponse carries a DOCTYPE or ENTITY declaration');
  // bytes do not bound the signature library's work: elements and depth do (response-bounds.ts)
  const shape = responseShape(text);
  if (shape.elements > MAX_RESPONSE_ELEMENTS || shape.depth > MAX_RESPONSE_DEPTH) {
    throw new SsoRefused('too-large', `The SAMLResponse has more than ${MAX_RESPONSE_ELEMENTS} elements or is nested deeper than ${MAX_RESPONSE_DEPTH}`);
  }

  // InResponseTo: a live request of this organization. It is only looked up here: node-saml
  // also removes a request when a response fails validation, which would let a forged, unsigned
  // post burn a person's sign-on; it is used up in signIn's transaction, by a validated response only
  const { db } = deps;
  const cache: CacheProvider = {
    saveAsync: async () => null,
    getAsync: async (key) => {
      const row = await db
        .selectFrom('saml_request')
        .select('id')
        .where('id', '=', key)
        .where('organization_id', '=', organizationId)
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
      return row ? new Date().toISOString() : null;
    },
    removeAsync: async () => null,
  };
  let profile: Profile;
  try {
    const result = await (await samlFor(deps, connection, cache)).validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!result.profile) throw new SsoRefused('invalid', 'The response holds no assertion');
    profile = result.profile;
  } catch (err) {
    if (err instanceof SsoRefused) throw err;
    const message = (err as Error).message ?? String(err);
    throw new SsoRefused(reasonOf(message), message.slice(0, 300));
  }

  // from here on only the validated (signed) assertion is read
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlJs } | undefined)?.Assertion;
  if (!assertion) throw new SsoRefused('invalid', 'No validated assertion');
  if (profile.issuer !== connection.idp_entity_id) throw new SsoRefused('issuer', `The assertion's issuer is not ${connection.idp_entity_id}`);
  const acsUrl = deps.urls.acsUrl(organizationId);
  const destination = /<(?:\w+:)?Response\b[^>]*\sDestination="([^"]*)"/.exec(text)?.[1];
  if (destination !== undefined && destination !== acsUrl) throw new SsoRefused('destination', "The response's Destination is not our ACS URL");
  const confirmations = all(first(assertion, 'Subject'), 'SubjectConfirmation').map((c) => first(c, 'SubjectConfirmationData')?.$ ?? {});
  if (!confirmations.some((data) => data.Recipient === acsUrl)) throw new SsoRefused('recipient', 'No SubjectConfirmationData with our ACS URL as Recipient');
  const assertionId = assertion.$?.ID;
  if (!assertionId) throw new SsoRefused('invalid', 'The assertion has no ID');

  const email = emailOf(profile);
  if (!email) throw new SsoRefused('no-email', 'Neither the NameID nor an email attribute holds an email address');
  if (!(await deps.domains.isVerifiedFor(organizationId, email))) {
    throw new SsoRefused('domain-not-verified', `${domainOf(email)} is not a verified domain of this organization`);
  }
  const notOnOrAfter = first(assertion, 'Conditions')?.$?.NotOnOrAfter;
  const keepUntil = Math.max(Date.now(), Date.parse(notOnOrAfter ?? '') || 0) + CLOCK_SKEW_MS + 24 * 3600 * 1000;

  const requestId = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : undefined;
  if (!requestId) throw new SsoRefused('unsolicited', 'The response answers no request of ours');
  return { email, name: nameOf(profile), requestId, assertionId, keepUntil: new Date(keepUntil) };
}

const EMAIL = /^[^\s@<>()",;:\\]+@[a-z0-9.-]+\.[a-z]{2,63}$/i;
const stringOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined);

/** The email of the validated assertion: the NameID when it is one, else an email attribute. */
function emailOf(profile: Profile): string | undefined {
  const attrs = (profile.attributes ?? {}) as Record<string, unknown>;
  const candidates = [
    profile.nameID,
    stringOf(profile.email),
    stringOf(profile.mail),
    stringOf(attrs.email),
    stringOf(attrs.Email),
    stringOf(attrs['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']),
  ];
  for (const candidate of candidates) {
    const email = candidate && normalizeEmail(candidate);
    if (email && email.length <= 254 && EMAIL.test(email)) return email;
  }
  return undefined;
}

function nameOf(profile: Profile): string | null {
  const attrs = (profile.attributes ?? {}) as Record<string, unknown>;
  const display = stringOf(attrs.displayName) ?? stringOf(attrs['http://schemas.microsoft.com/identity/claims/displayname']);
  const given = stringOf(attrs.firstName) ?? stringOf(attrs.givenName) ?? stringOf(attrs['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname']);
  const family = stringOf(attrs.lastName) ?? stringOf(attrs.surname) ?? stringOf(attrs['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname']);
  const name = display ?? ([given, family].filter(Boolean).join(' ') || null);
  return name ? name.trim().slice(0, 100) || null : null;
}
