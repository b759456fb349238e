/**
 * SP-initiated SAML sign-on (docs/sso.md, "3. Signing in"): the AuthnRequest (HTTP-Redirect, stored
 * so its answer can be matched once), and the sign-in of a response the ACS's checks passed
 * (assertion.ts): in one transaction the request and the assertion id are used up, the account is
 * created or its address proven, and it joins the organization.
 */
import { randomBytes } from 'node:crypto';
import type { CacheProvider } from '@node-saml/node-saml';
import { sql } from 'kysely';
import { addressFirstProven } from '../account/address-proof.js';
import { insertAccount, normalizeEmail } from '../account/service.js';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { HttpError, notFound } from '../http/errors.js';
import type { NotificationService } from '../notifications/service.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { samlFor, SsoRefused, validateResponse, type ValidatedAssertion } from './assertion.js';
import type { ConnectionRow, ConnectionService, ServiceProviderUrls } from './connections.js';
import type { DomainService } from './domains.js';

/** What a validated response signs in. */
export interface SsoIdentity {
  organizationId: string;
  accountId: string;
  email: string;
  created: boolean;
  joined: boolean;
  /** sessions a first proof of the address ended (RefreshTokens.sessionsEnded after commit) */
  endedSessions: string[];
}

export interface SignOnDeps {
  db: DB;
  urls: ServiceProviderUrls;
  connections: ConnectionService;
  domains: DomainService;
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccountIn' | 'sessionsEnded'>;
  notifications: Pick<NotificationService, 'notify'>;
  requestTtlMs: number;
  /** the rules a new member must pass (billing's seat cap), asked in the join's transaction; throws to refuse */
  checkNewSeat(trx: DB, organizationId: string): Promise<void>;
}

export class SignOnService {
  constructor(private readonly deps: SignOnDeps) {}

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
    const url = await (await samlFor(this.deps, connection, cache)).getAuthorizeUrlAsync(randomBytes(12).toString('base64url'), undefined, {});
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
    const assertion = await validateResponse(this.deps, organizationId, connection, samlResponse);
    return this.signIn(connection, assertion, origin);
  }

  private async signIn(
    connection: ConnectionRow,
    { email, name, requestId, assertionId, keepUntil }: ValidatedAssertion,
    origin: RequestOrigin,
  ): Promise<SsoIdentity> {
    const organizationId = connection.organization_id;
    const { db, refreshTokens, notifications } = this.deps;
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
        // the assertion is the first proof of the address: what was added before it goes, the password too;
        // it signs the person in, and sets no password (the account's security page sets one with this sign-in)
        const proof = await addressFirstProven(
          trx,
          { refreshTokens, notifications },
          { accountId: account.id, via: 'single-sign-on', origin, resetToken: false },
        );
        endedSessions = proof.endedSessions;
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
        // a just-in-time join takes a seat as an invitation does: held to the plan's cap (a member signing in is not)
        try {
          await this.deps.checkNewSeat(trx, organizationId);
        } catch (err) {
          if (err instanceof HttpError && err.body.type === 'seat-limit') throw new SsoRefused('seat-limit', String(err.body.message));
          throw err;
        }
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
      return { organizationId, accountId: account.id, email, created, joined, endedSessions };
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
