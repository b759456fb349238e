/**
 * SP-initiated SAML sign-on (DESIGN.md, "Enterprise single sign-on (SAML 2.0)"; docs/sso.md):
 * the AuthnRequest (HTTP-Redirect, stored so its answer can be matched once), and the ACS's
 * checks with @node-saml/node-saml (signature of the response or assertion by the metadata's
 * certificate, InResponseTo of a live request, time window with 2 minutes of skew, audience)
 * plus ours (issuer, destination and recipient, an assertion id never seen before, an email of a
 * verified domain of this organization). Every refusal is a {@link SsoRefused} with a reason code.
 */
import { randomBytes } from 'node:crypto';
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { sql } from 'kysely';
import { addressFirstProven } from '../account/address-proof.js';
import { insertAccount, normalizeEmail } from '../account/service.js';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { notFound } from '../http/errors.js';
import type { Mail } from '../mail/index.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { EMAIL_NAME_ID, type ConnectionRow, type ConnectionService, type ServiceProviderUrls } from './connections.js';
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

/** What a validated response signs in. */
export interface SsoIdentity {
  organizationId: string;
  accountId: string;
  email: string;
  created: boolean;
  joined: boolean;
  /** sessions a first proof of the address ended (RefreshTokens.sessionsEnded after commit) */
  endedSessions: string[];
  /** a first proof removed a password set before it: a reset token for the landing page to set one at once */
  passwordResetToken?: string;
}

export interface SignOnDeps {
  db: DB;
  urls: ServiceProviderUrls;
  connections: ConnectionService;
  domains: DomainService;
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccountIn' | 'sessionsEnded'>;
  mail: Pick<Mail, 'enqueue'>;
  requestTtlMs: number;
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

export class SignOnService {
  constructor(private readonly deps: SignOnDeps) {}

  /** node-saml for one connection (loaded at the first sign-on); `cache` stores and uses up our requests for it. */
  private async saml(connection: ConnectionRow, cache: CacheProvider): Promise<SAML> {
    const { SAML, ValidateInResponseTo } = await nodeSaml();
    const orgId = connection.organization_id;
    return new SAML({
      entryPoint: connection.idp_sso_url,
      issuer: this.deps.urls.entityId(orgId),
      callbackUrl: this.deps.urls.acsUrl(orgId),
      audience: this.deps.urls.entityId(orgId),
      idpCert: connection.idp_certificates.map(toPem),
      idpIssuer: connection.idp_entity_id,
      identifierFormat: EMAIL_NAME_ID,
      // the response or the assertion must be signed (either is enough: IdPs differ)
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: this.deps.requestTtlMs,
      disableRequestedAuthnContext: true,
      cacheProvider: cache,
    });
  }

  /** `{url}` of the IdP for the email's organization; 404 `sso-not-configured` without a verified domain and a connection. */
  async start(email: string): Promise<{ url: string; organizationId: string }> {
    const organizationId = await this.deps.domains.ownerOfEmail(normalizeEmail(email));
    const connection = organizationId && (await this.deps.connections.row(organizationId));
    if (!organizationId || !connection) throw notFound('Single sign-on is not set up for this address', { type: 'sso-not-configured' });
    const { db, requestTtlMs } = this.deps;
    const cache: CacheProvider = {
      saveAsync: async (key, value) => {
        await db
          .insertInto('saml_request')
          .values({ id: key, organization_id: organizationId, expires_at: new Date(Date.now() + requestTtlMs) })
          .execute();
        return { value, createdAt: Date.now() };
      },
      getAsync: async () => null,
      removeAsync: async () => null,
    };
    // RelayState: an opaque value the IdP hands back; the ACS path names the organization
    const url = await (await this.saml(connection, cache)).getAuthorizeUrlAsync(randomBytes(12).toString('base64url'), undefined, {});
    return { url, organizationId };
  }

  /**
   * Validates a posted SAMLResponse for the organization and signs its subject in: creates the
   * account (address verified) when there is none, proves an unverified one's address for the
   * first time (address-proof.ts), makes it a member with the connection's default role.
   */
  async accept(organizationId: string, samlResponse: string, origin: RequestOrigin): Promise<SsoIdentity> {
    const connection = await this.deps.connections.row(organizationId);
    if (!connection) throw new SsoRefused('not-configured', 'This organization has no SAML connection');
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
    const { db } = this.deps;
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
      const result = await (await this.saml(connection, cache)).validatePostResponseAsync({ SAMLResponse: samlResponse });
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
    const acsUrl = this.deps.urls.acsUrl(organizationId);
    const destination = /<(?:\w+:)?Response\b[^>]*\sDestination="([^"]*)"/.exec(text)?.[1];
    if (destination !== undefined && destination !== acsUrl) throw new SsoRefused('destination', "The response's Destination is not our ACS URL");
    const confirmations = all(first(assertion, 'Subject'), 'SubjectConfirmation').map((c) => first(c, 'SubjectConfirmationData')?.$ ?? {});
    if (!confirmations.some((data) => data.Recipient === acsUrl)) throw new SsoRefused('recipient', 'No SubjectConfirmationData with our ACS URL as Recipient');
    const assertionId = assertion.$?.ID;
    if (!assertionId) throw new SsoRefused('invalid', 'The assertion has no ID');

    const email = emailOf(profile);
    if (!email) throw new SsoRefused('no-email', 'Neither the NameID nor an email attribute holds an email address');
    if (!(await this.deps.domains.isVerifiedFor(organizationId, email))) {
      throw new SsoRefused('domain-not-verified', `${domainOf(email)} is not a verified domain of this organization`);
    }
    const notOnOrAfter = first(assertion, 'Conditions')?.$?.NotOnOrAfter;
    const keepUntil = Math.max(Date.now(), Date.parse(notOnOrAfter ?? '') || 0) + CLOCK_SKEW_MS + 24 * 3600 * 1000;

    const requestId = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : undefined;
    if (!requestId) throw new SsoRefused('unsolicited', 'The response answers no request of ours');
    return this.signIn(connection, email, nameOf(profile), { requestId, assertionId }, new Date(keepUntil), origin);
  }

  private async signIn(
    connection: ConnectionRow,
    email: string,
    name: string | null,
    { requestId, assertionId }: { requestId: string; assertionId: string },
    keepUntil: Date,
    origin: RequestOrigin,
  ): Promise<SsoIdentity> {
    const organizationId = connection.organization_id;
    const { db, refreshTokens, mail } = this.deps;
    const identity = await db.transaction().execute(async (trx) => {
      // the request is used up by its first validated answer: the delete decides, also between two posts racing
      const request = await trx
        .deleteFrom('saml_request')
        .where('id', '=', requestId)
        .where('organization_id', '=', organizationId)
        .where('expires_at', '>', new Date())
        .returning('id')
        .executeTakeFirst();
      if (!request) throw new SsoRefused('unknown-request', 'The request this response answers was answered before, or has expired');
      // never seen before: the primary key decides, also between two posts racing
      const fresh = await trx
        .insertInto('saml_assertion')
        .values({ organization_id: organizationId, id: assertionId.slice(0, 256), expires_at: keepUntil })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!fresh) throw new SsoRefused('replayed', 'This assertion was used before');
      let account = await trx.selectFrom('account').select(['id', 'email_verified']).where('email', '=', email).forUpdate().executeTakeFirst();
      let created = false;
      let endedSessions: string[] = [];
      let passwordResetToken: string | undefined;
      if (!account) {
        const inserted = await insertAccount(trx, { email, name, passwordHash: null, emailVerified: true });
        await appendAudit(trx, {
          action: 'account.signed-up',
          organizationId: inserted.organizationId,
          accountId: inserted.id,
          actor: { accountId: inserted.id },
          target: { type: 'account', id: inserted.id },
          details: { method: 'saml', 'organization-id': organizationId },
          origin,
        });
        account = { id: inserted.id, email_verified: true };
        created = true;
      } else if (!account.email_verified) {
        // the assertion is the first proof of the address: what was added before it goes
        const proof = await addressFirstProven(trx, { refreshTokens, mail }, { accountId: account.id, via: 'single-sign-on', origin });
        endedSessions = proof.endedSessions;
        passwordResetToken = proof.passwordResetToken;
      }
      const member = await trx
        .selectFrom('membership')
        .select(['role', 'suspended_at'])
        .where('organization_id', '=', organizationId)
        .where('account_id', '=', account.id)
        .executeTakeFirst();
      if (member?.suspended_at) throw new SsoRefused('membership-suspended', 'The membership is suspended by the directory');
      let joined = false;
      if (!member) {
        const added = await trx
          .insertInto('membership')
          .values({ organization_id: organizationId, account_id: account.id, role: connection.default_role })
          .returning(['role', 'joined_at'])
          .executeTakeFirstOrThrow();
        const profile = await trx.selectFrom('account').select(['email', 'name']).where('id', '=', account.id).executeTakeFirstOrThrow();
        await emitWebhookEvent(trx, organizationId, 'member.added', {
          member: {
            'account-id': account.id,
            email: profile.email,
            name: profile.name,
            role: added.role,
            'joined-at': new Date(added.joined_at).toISOString(),
          },
        });
        await appendAudit(trx, {
          action: 'sso.member-joined',
          organizationId,
          accountId: account.id,
          actor: { accountId: account.id },
          target: { type: 'account', id: account.id },
          details: { role: connection.default_role, method: 'saml' },
          origin,
        });
        joined = true;
      }
      return { organizationId, accountId: account.id, email, created, joined, endedSessions, ...(passwordResetToken ? { passwordResetToken } : {}) };
    });
    refreshTokens.sessionsEnded(identity.endedSessions);
    return identity;
  }

  /** Requests and assertion ids past their time (the expiry check calls it daily). */
  async purge(): Promise<void> {
    await this.deps.db.deleteFrom('saml_request').where('expires_at', '<', sql<Date>`now()`).execute();
    await this.deps.db.deleteFrom('saml_assertion').where('expires_at', '<', sql<Date>`now()`).execute();
  }
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
