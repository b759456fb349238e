/**
 * The members of an organization: the list, role changes and removals (leaving included). Routes
 * check the caller's role before a handler runs (`orgRole`, src/http/routes.ts); what depends on
 * the target as well (owners are made, unmade and removed by owners; the last owner stays) is
 * checked here, inside a transaction that first locks the organization's row, so concurrent role
 * changes of one organization are decided one after the other. The database checks the owner
 * rule again at commit (migration 0007), and that refusal becomes the same 409.
 */
import type { Transaction } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import { conflict, forbidden, notFound } from '../http/errors.js';
import { hasRole, type Membership, type OrgRole } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { orgEntry } from './audit-entry.js';
import { invitationRolesBeyond, isOwnerRuleViolation, MEMBER_COLUMNS, revokeInvitationsSentBy, toMember, webhookMember } from './data.js';
import type { OrganizationShaping } from './organization-shaping.js';
import type { Member, Members } from './schemas.js';
import { phrase, type Phrase } from '../i18n/messages.js';

type Trx = Transaction<DatabaseSchema>;

const lastOwner = () => conflict('An organization needs an owner: make another member owner first', { reason: 'last-owner' });

export class MemberService {
  constructor(
    private readonly db: DB,
    private readonly log: Logger,
    private readonly shaping: OrganizationShaping,
    private readonly notifications: Pick<NotificationService, 'notify'>,
  ) {}

  /** Tells the organization's owners and admins (but the one who acted) of a change of its members. */
  private async tellAdmins(
    trx: DB,
    organizationId: string,
    actorId: string,
    kind: 'member-left' | 'member-role-changed',
    title: Phrase,
    body: Phrase,
  ): Promise<void> {
    await this.notifications.notify(trx, {
      kind,
      to: { organization: organizationId, roles: ['owner', 'admin'], except: actorId },
      title,
      body,
      url: `/orgs/${organizationId}/members`,
    });
  }

  async list(organizationId: string): Promise<Members> {
    const rows = await this.db
      .selectFrom('membership')
      .innerJoin('account', 'account.id', 'membership.account_id')
      .select([...MEMBER_COLUMNS, 'membership.suspended_at'])
      .where('membership.organization_id', '=', organizationId)
      .orderBy('membership.joined_at')
      .orderBy('account.id')
      .execute();
    return { members: rows.map((r) => ({ ...toMember(r, this.shaping), suspended: r.suspended_at !== null })) };
  }

  /**
   * Changes a member's role: admins change admins and members; making or unmaking an owner takes
   * an owner. A demoted member's pending invitations it may no longer grant are revoked with
   * the change. A personal organization has only its owner: 409.
   */
  async update(caller: Membership, accountId: string, role: OrgRole, origin: RequestOrigin): Promise<Member> {
    return this.roleChange(
      caller,
      accountId,
      async (trx, state) => {
        if ((state.target.role === 'owner' || role === 'owner') && state.callerRole !== 'owner') {
          throw forbidden('Only an owner can make or unmake owners', { 'required-role': 'owner', role: state.callerRole });
        }
        await trx.updateTable('membership').set({ role }).where('organization_id', '=', caller.organizationId).where('account_id', '=', accountId).execute();
        if (state.target.role !== role) {
          await appendAudit(
            trx,
            orgEntry(caller.organizationId, caller, {
              action: 'org.member-role-changed',
              target: { type: 'account', id: accountId },
              details: { role, 'previous-role': state.target.role },
              origin,
            }),
          );
          await this.revokeInvitationsOf(trx, caller, accountId, invitationRolesBeyond(role), 'inviter-demoted', origin);
        }
        const [member] = await this.memberRows(trx, caller.organizationId, accountId);
        if (member && state.target.role !== role)
          await this.tellAdmins(
            trx,
            caller.organizationId,
            caller.accountId,
            'member-role-changed',
            phrase('{name} is now {role, select, owner {owner} admin {admin} other {member}}', { name: member.name ?? member.email, role }),
            phrase('{email} was {role, select, owner {owner} admin {admin} other {member}}.', { email: member.email, role: state.target.role }),
          );
        if (state.target.role !== role) await emitWebhookEvent(trx, caller.organizationId, 'member.updated', { member: webhookMember(member) });
        this.log.info('orgs/role-changed', 'Member role changed', {
          'organization-id': caller.organizationId,
          'account-id': accountId,
          role,
          'by-account-id': caller.accountId,
        });
        return member;
      },
      (target, owners, personal) => {
        if (personal) throw conflict('A personal organization has only its owner: its roles do not change', { reason: 'personal' });
        if (target.role === 'owner' && role !== 'owner' && owners === 1) throw lastOwner();
      },
    );
  }

  /** Revokes `inviterId`'s pending invitations of `roles` in the caller's organization, each audited with `reason`. */
  private async revokeInvitationsOf(trx: Trx, caller: Membership, inviterId: string, roles: OrgRole[], reason: string, origin: RequestOrigin): Promise<void> {
    const revoked = await revokeInvitationsSentBy(trx, inviterId, roles, caller.organizationId);
    for (const invitation of revoked) {
      await appendAudit(
        trx,
        orgEntry(caller.organizationId, caller, {
          action: 'org.invitation-revoked',
          target: { type: 'invitation', id: invitation.id },
          details: { email: invitation.email, role: invitation.role, reason, 'invited-by': inviterId },
          origin,
        }),
      );
    }
    if (revoked.length > 0) {
      this.log.info('orgs/invitations-revoked', 'Pending invitations of a removed or demoted inviter revoked', {
        'organization-id': caller.organizationId,
        'account-id': inviterId,
        count: revoked.length,
        reason,
      });
    }
  }

  /** Removes a member: admins remove admins and members, owners anyone; every member can leave. */
  async remove(caller: Membership, accountId: string, origin: RequestOrigin): Promise<void> {
    const leaving = accountId === caller.accountId;
    await this.roleChange(
      caller,
      accountId,
      async (trx, state) => {
        if (!leaving) {
          const needed: OrgRole = state.target.role === 'owner' ? 'owner' : 'admin';
          if (!hasRole(state.callerRole, needed)) {
            throw forbidden(needed === 'owner' ? 'Only an owner can remove an owner' : 'Removing other members needs the role admin or above', {
              'required-role': needed,
              role: state.callerRole,
            });
          }
        }
        const removed = await trx
          .deleteFrom('membership')
          .using('account')
          .whereRef('account.id', '=', 'membership.account_id')
          .where('membership.organization_id', '=', caller.organizationId)
          .where('membership.account_id', '=', accountId)
          .returning(MEMBER_COLUMNS)
          .execute();
        for (const member of removed) {
          await emitWebhookEvent(trx, caller.organizationId, 'member.removed', { member: webhookMember(toMember(member, this.shaping)) });
          await this.tellAdmins(
            trx,
            caller.organizationId,
            caller.accountId,
            'member-left',
            leaving ? phrase('{name} left', { name: member.name ?? member.email }) : phrase('{name} was removed', { name: member.name ?? member.email }),
            phrase('{email} is no longer a member (was {role, select, owner {owner} admin {admin} other {member}}).', {
              email: member.email,
              role: state.target.role,
            }),
          );
        }
        await appendAudit(
          trx,
          orgEntry(caller.organizationId, caller, {
            action: leaving ? 'org.member-left' : 'org.member-removed',
            target: { type: 'account', id: accountId },
            details: { role: state.target.role },
            origin,
          }),
        );
        // what it sent would make someone a member on the word of a non-member
        await this.revokeInvitationsOf(trx, caller, accountId, invitationRolesBeyond(undefined), leaving ? 'inviter-left' : 'inviter-removed', origin);
        this.log.info(leaving ? 'orgs/member-left' : 'orgs/member-removed', leaving ? 'Member left' : 'Member removed', {
          'organization-id': caller.organizationId,
          'account-id': accountId,
          'by-account-id': caller.accountId,
        });
      },
      (target, owners) => {
        if (target.role === 'owner' && owners === 1) throw lastOwner();
      },
    );
  }

  /**
   * Runs a role change with the organization's row locked: the roles are read after the lock,
   * so a concurrent change that committed first is seen (the caller's own role included).
   */
  private async roleChange<T>(
    caller: Membership,
    accountId: string,
    change: (trx: Trx, state: { target: { role: OrgRole }; callerRole: OrgRole; owners: number }) => Promise<T>,
    lastOwnerRule: (target: { role: OrgRole }, owners: number, personal: boolean) => void,
  ): Promise<T> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const org = await trx.selectFrom('organization').select(['id', 'personal']).where('id', '=', caller.organizationId).forUpdate().executeTakeFirst();
        if (!org) throw notFound('No such organization');
        const rows = await trx
          .selectFrom('membership')
          .select(['account_id', 'role'])
          .where('organization_id', '=', caller.organizationId)
          .where((eb) => eb.or([eb('role', '=', 'owner'), eb('account_id', 'in', [accountId, caller.accountId])]))
          .execute();
        const target = rows.find((r) => r.account_id === accountId);
        if (!target) throw notFound('No such member', { 'account-id': accountId });
        const owners = rows.filter((r) => r.role === 'owner').length;
        // first: the answer to a change that would leave no owner is 409, also for a caller a concurrent change just demoted or removed
        lastOwnerRule(target, owners, org.personal);
        const callerRow = rows.find((r) => r.account_id === caller.accountId);
        if (!callerRow) throw notFound('No such organization');
        return change(trx, { target, callerRole: callerRow.role, owners });
      });
    } catch (err) {
      if (isOwnerRuleViolation(err)) throw lastOwner();
      throw err;
    }
  }

  private memberRows(trx: Trx, organizationId: string, accountId: string): Promise<Member[]> {
    return trx
      .selectFrom('membership')
      .innerJoin('account', 'account.id', 'membership.account_id')
      .select(MEMBER_COLUMNS)
      .where('membership.organization_id', '=', organizationId)
      .where('membership.account_id', '=', accountId)
      .execute()
      .then((rows) => rows.map((r) => toMember(r, this.shaping)));
  }
}
