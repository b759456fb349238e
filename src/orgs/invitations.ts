/**
 * Invitations by email: an admin invites an address with a role; the link (7 days, single use,
 * stored as a hash) is queued in the invitation's transaction; only the account whose verified
 * email is the invited address can accept it. An address without an account goes through
 * sign-up and verification first (the client's landing page leads there and back).
 */
import { sql } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import { newActionToken } from '../account/action-tokens.js';
import { normalizeEmail } from '../account/service.js';
import { hashToken } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { conflict, forbidden, invalidToken, notFound, unauthorized } from '../http/errors.js';
import { hasRole, type AuthUser, type Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { LINK_LIFETIME_SECONDS, type Mail } from '../mail/index.js';
import type { NotificationService } from '../notifications/service.js';
import { isLocale } from '../shared/locales.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { ORGANIZATION_COLUMNS, roleNeededToInvite, toOrganization } from './data.js';
import type { OrganizationShaping } from './organization-shaping.js';
import type { CreateInvitation, Invitation, Organization, PendingInvitation } from './schemas.js';
import { phrase } from '../i18n/messages.js';

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';
const personalOrganization = () => conflict('A personal organization has only its owner: invite people to a shared organization', { reason: 'personal' });
const alreadyInvited = () => conflict('This address has a pending invitation; revoke it to send a new one', { field: 'email' });

export interface InvitationDeps {
  db: DB;
  mail: Pick<Mail, 'enqueue'>;
  notifications: Pick<NotificationService, 'notify'>;
  log: Logger;
  /** the logo's links in the organization an acceptance answers */
  shaping: OrganizationShaping;
}

/**
 * A rule an invitation must pass, asked inside its transaction with the organization's row
 * locked (billing's seat cap): throws the answer to refuse it, and nothing is written.
 */
export type InvitationCheck = (trx: DB, organizationId: string) => Promise<void>;

export class InvitationService {
  private readonly checks: InvitationCheck[] = [];

  constructor(private readonly deps: InvitationDeps) {}

  /** Adds a rule every new invitation must pass (billing's seat cap). */
  useCheck(check: InvitationCheck): void {
    this.checks.push(check);
  }

  /**
   * The same rules for a member who joins without an invitation (a SAML just-in-time join), in
   * the join's transaction: the organization's row is locked, so joins and invitations are
   * counted one after the other; throws the answer to refuse it.
   */
  async checkNewSeat(trx: DB, organizationId: string): Promise<void> {
    if (this.checks.length === 0) return;
    await trx.selectFrom('organization').select('id').where('id', '=', organizationId).forUpdate().execute();
    for (const check of this.checks) await check(trx, organizationId);
  }

  async invite(caller: Membership, input: CreateInvitation, origin: RequestOrigin): Promise<Invitation> {
    const role = input.role ?? 'member';
    if (role === 'owner' && caller.role !== 'owner') {
      throw forbidden('Only an owner can invite an owner', { 'required-role': 'owner', role: caller.role });
    }
    const email = normalizeEmail(input.email);
    const { db } = this.deps;
    const member = await db
      .selectFrom('membership')
      .innerJoin('account', 'account.id', 'membership.account_id')
      .select('account.id')
      .where('membership.organization_id', '=', caller.organizationId)
      .where('account.email', '=', email)
      .executeTakeFirst();
    if (member) throw conflict('This address belongs to a member already', { field: 'email' });
    const { token, hash } = newActionToken();
    try {
      const row = await db.transaction().execute(async (trx) => {
        const context = await trx
          .selectFrom('organization')
          .innerJoin('account', (j) => j.on('account.id', '=', caller.accountId))
          .select([
            'organization.name as organization',
            'organization.personal',
            'account.name as inviterName',
            'account.email as inviterEmail',
            'account.locale as inviterLocale',
          ])
          .where('organization.id', '=', caller.organizationId)
          .executeTakeFirst();
        if (!context) throw notFound('No such organization');
        // its log holds the owner's own security events (log-in addresses, failed log-ins): nobody else joins
        if (context.personal) throw personalOrganization();
        if (this.checks.length > 0) {
          // invitations of one organization are counted one after the other
          await trx.selectFrom('organization').select('id').where('id', '=', caller.organizationId).forUpdate().execute();
          for (const check of this.checks) await check(trx, caller.organizationId);
        }
        // an expired invitation no longer counts as pending: it makes way for the new one
        await trx
          .updateTable('invitation')
          .set({ revoked_at: sql`now()` })
          .where('organization_id', '=', caller.organizationId)
          .where('email', '=', email)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '<=', sql<Date>`now()`)
          .execute();
        const inserted = await trx
          .insertInto('invitation')
          .values({
            organization_id: caller.organizationId,
            email,
            role,
            token_hash: hash,
            invited_by: caller.accountId,
            expires_at: sql`now() + make_interval(secs => ${LINK_LIFETIME_SECONDS.invitation})`,
          })
          .returning(['id', 'email', 'role', 'expires_at'])
          .executeTakeFirstOrThrow();
        await this.deps.mail.enqueue(trx, {
          kind: 'invitation',
          to: email,
          data: { inviter: context.inviterName ?? context.inviterEmail, organization: context.organization, role, token },
          // an address without an account reads it in the inviter's language (docs/email.md, "Languages")
          locale: isLocale(context.inviterLocale) ? context.inviterLocale : null,
        });
        // an account with that address sees it in the app too; the email above (with its link) is always sent
        const invitee = await trx.selectFrom('account').select('id').where('email', '=', email).executeTakeFirst();
        if (invitee)
          await this.deps.notifications.notify(trx, {
            kind: 'invitation-received',
            to: { accounts: [invitee.id] },
            organizationId: caller.organizationId,
            title: phrase('{inviter} invited you to {organization}', {
              inviter: context.inviterName ?? context.inviterEmail,
              organization: context.organization,
            }),
            body: phrase('As {role, select, owner {owner} admin {admin} other {member}}: the invitation email has the link to accept it.', { role }),
            url: null,
            email: () => undefined,
          });
        await appendAudit(trx, {
          action: 'org.invitation-sent',
          organizationId: caller.organizationId,
          accountId: caller.accountId,
          actor: { accountId: caller.accountId },
          target: { type: 'invitation', id: inserted.id },
          details: { email, role },
          origin,
        });
        await emitWebhookEvent(trx, caller.organizationId, 'invitation.created', { invitation: toInvitation(inserted) });
        return inserted;
      });
      this.deps.log.info('orgs/invited', 'Invitation sent', {
        'organization-id': caller.organizationId,
        'invitation-id': row.id,
        role,
        'by-account-id': caller.accountId,
      });
      return toInvitation(row);
    } catch (err) {
      // the partial unique index decides between two invitations racing for one address
      if (isUniqueViolation(err)) throw alreadyInvited();
      throw err;
    }
  }

  /** Pending invitations: neither accepted, revoked nor expired; newest first. */
  async list(organizationId: string): Promise<{ invitations: PendingInvitation[] }> {
    const rows = await this.deps.db
      .selectFrom('invitation')
      .select(['id', 'email', 'role', 'expires_at', 'created_at', 'invited_by'])
      .where('organization_id', '=', organizationId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return {
      invitations: rows.map((r) => ({
        id: r.id,
        email: r.email,
        role: r.role,
        'expires-at': r.expires_at.toISOString(),
        'created-at': r.created_at.toISOString(),
        'invited-by': r.invited_by,
      })),
    };
  }

  async revoke(caller: Membership, invitationId: string, origin: RequestOrigin): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('invitation')
        .set({ revoked_at: sql`now()` })
        .where('id', '=', invitationId)
        .where('organization_id', '=', caller.organizationId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .returning(['id', 'email', 'role', 'expires_at'])
        .executeTakeFirst();
      if (!row) throw notFound('No such pending invitation');
      await emitWebhookEvent(trx, caller.organizationId, 'invitation.revoked', { invitation: toInvitation(row) });
      await appendAudit(trx, {
        action: 'org.invitation-revoked',
        organizationId: caller.organizationId,
        accountId: caller.accountId,
        actor: { accountId: caller.accountId },
        target: { type: 'invitation', id: row.id },
        details: { email: row.email, role: row.role },
        origin,
      });
    });
    this.deps.log.info('orgs/invitation-revoked', 'Invitation revoked', {
      'organization-id': caller.organizationId,
      'invitation-id': invitationId,
      'by-account-id': caller.accountId,
    });
  }

  /**
   * Accepts an invitation for the caller: the token must be pending and unexpired (else 400
   * `invalid-token`), and the caller's verified address the invited one (else 403, the token
   * stays usable). A member already keeps its role.
   */
  async accept(user: AuthUser, token: string, origin: RequestOrigin): Promise<Organization> {
    return this.deps.db.transaction().execute(async (trx) => {
      const invitation = await trx
        .selectFrom('invitation')
        .select([
          'id',
          'organization_id',
          'email',
          'role',
          'invited_by',
          'expires_at',
          sql<boolean>`expires_at > now()`.as('live'),
          'accepted_at',
          'revoked_at',
        ])
        .where('token_hash', '=', hashToken(token))
        .forUpdate()
        .executeTakeFirst();
      if (!invitation?.live || invitation.accepted_at || invitation.revoked_at) {
        throw invalidToken('This invitation is invalid, was already used, was revoked or has expired');
      }
      // the inviter's standing now, not when it sent the link: a removed, suspended or demoted admin grants nothing
      // (its pending invitations are revoked with the change; this holds for any made before that rule)
      const target = await trx.selectFrom('organization').select('personal').where('id', '=', invitation.organization_id).executeTakeFirstOrThrow();
      if (target.personal) throw personalOrganization();
      // a membership the directory suspended grants nothing, not even through what it sent before
      const inviter =
        invitation.invited_by === null
          ? undefined
          : await trx
              .selectFrom('membership')
              .select('role')
              .where('organization_id', '=', invitation.organization_id)
              .where('account_id', '=', invitation.invited_by)
              .where('suspended_at', 'is', null)
              .executeTakeFirst();
      if (!inviter || !hasRole(inviter.role, roleNeededToInvite(invitation.role))) {
        throw invalidToken('This invitation is no longer valid: whoever sent it can no longer grant it');
      }
      const account = await trx.selectFrom('account').select(['email', 'name', 'email_verified']).where('id', '=', user.id).executeTakeFirst();
      if (!account) throw unauthorized('Account no longer exists');
      if (account.email !== invitation.email) {
        throw forbidden('This invitation was sent to another email address: log in with the account of that address to accept it', {
          reason: 'email-mismatch',
        });
      }
      if (!account.email_verified) {
        throw forbidden('Verify your email address first (open the link we sent you), then accept the invitation', { reason: 'email-unverified' });
      }
      const joined = await trx
        .insertInto('membership')
        .values({ organization_id: invitation.organization_id, account_id: user.id, role: invitation.role })
        .onConflict((oc) => oc.columns(['organization_id', 'account_id']).doNothing())
        .returning(['role', 'joined_at'])
        .executeTakeFirst();
      await appendAudit(trx, {
        action: 'org.invitation-accepted',
        organizationId: invitation.organization_id,
        accountId: user.id,
        actor: { accountId: user.id },
        // a member already keeps its role: nothing joined
        target: { type: 'invitation', id: invitation.id },
        details: { role: invitation.role, joined: joined !== undefined },
        origin,
      });
      await trx.updateTable('invitation').set({ accepted_at: sql`now()`, accepted_by: user.id }).where('id', '=', invitation.id).execute();
      await emitWebhookEvent(trx, invitation.organization_id, 'invitation.accepted', { invitation: toInvitation(invitation) });
      if (joined) {
        const orgName = await trx.selectFrom('organization').select('name').where('id', '=', invitation.organization_id).executeTakeFirstOrThrow();
        await this.deps.notifications.notify(trx, {
          kind: 'member-joined',
          to: { organization: invitation.organization_id, roles: ['owner', 'admin'], except: user.id },
          title: phrase('{name} joined {organization}', { name: account.name ?? account.email, organization: orgName.name }),
          body: phrase('{email} accepted the invitation and joined as {role, select, owner {owner} admin {admin} other {member}}.', {
            email: account.email,
            role: joined.role,
          }),
          url: `/orgs/${invitation.organization_id}/members`,
        });
        await emitWebhookEvent(trx, invitation.organization_id, 'member.added', {
          member: { 'account-id': user.id, email: account.email, name: account.name, role: joined.role, 'joined-at': new Date(joined.joined_at).toISOString() },
        });
      }
      const org = await trx
        .selectFrom('organization')
        .innerJoin('membership', 'membership.organization_id', 'organization.id')
        .select([...ORGANIZATION_COLUMNS, 'membership.role'])
        .where('organization.id', '=', invitation.organization_id)
        .where('membership.account_id', '=', user.id)
        .executeTakeFirstOrThrow();
      this.deps.log.info('orgs/invitation-accepted', 'Invitation accepted', {
        'organization-id': invitation.organization_id,
        'invitation-id': invitation.id,
        'account-id': user.id,
      });
      return toOrganization(org, org.role, this.deps.shaping);
    });
  }
}

/** An invitation in the API's shape (also what webhook events carry). */
function toInvitation(row: { id: string; email: string; role: Invitation['role']; expires_at: Date }): Invitation {
  return { id: row.id, email: row.email, role: row.role, 'expires-at': new Date(row.expires_at).toISOString() };
}
