/**
 * The account's data as a whole: the export (GDPR access) and the deletion (erasure).
 *
 * Deletion leaves no row that names the account except what payment law needs: its payment
 * events stay, unlinked (`account_id` null; the provider's customer id and payload stay, as
 * the provider keeps them). Sessions are revoked first, so their access tokens are refused on
 * every instance; the revoked families stay unlinked and without metadata (see migration 0006),
 * because instances that start or poll learn of revocations from them.
 *
 * The audit log: the account's own entries go with its personal organization (and those of the
 * organizations it alone owned with them); entries in shared organizations stay, without the
 * link to the account (`account_id` and the actor set null), and each shared organization it was
 * still a member of records `account.deleted` (no address kept: the person is gone). docs/audit.md.
 */
import { sql } from 'kysely';
import { appendAudit, NO_ORIGIN } from '../audit/log.js';
import { exportAuditLog } from '../audit/service.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import { unauthorized } from '../http/errors.js';
import { exportMemberships, invitationRolesBeyond, revokeInvitationsSentBy, solelyOwnedOrganizations, type BeforeOrganizationsDeleted } from '../orgs/data.js';
import { listPasskeys } from '../passkeys/service.js';
import { accountIdentities } from '../oidc/identities.js';
import type { AuthUser } from '../http/routes.js';
import type { AccountExport } from './lifecycle-schemas.js';
import type { PasswordCheckDeps } from './password-check.js';
import type { AccountSessions } from './sessions.js';
import type { AccountShaping } from './account-shaping.js';
import { ACCOUNT_COLUMNS, toUserAccount } from './service.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';

export interface AccountDataDeps extends PasswordCheckDeps {
  refreshTokens: RefreshTokens;
  sessions: AccountSessions;
  /** told of the organizations the deletion takes along (billing cancels their subscriptions first) */
  beforeOrganizationsDeleted?: BeforeOrganizationsDeleted;
  /** who is a platform admin, for the account shape's `platform-admin` */
  shaping: AccountShaping;
}

export class AccountData {
  constructor(private readonly deps: AccountDataDeps) {}

  async export(user: AuthUser): Promise<AccountExport> {
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', user.id).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    const events = await this.deps.db
      .selectFrom('payment_event')
      .select(['provider', 'event_id', 'type', 'created_at', 'received_at', 'payload'])
      .where('account_id', '=', user.id)
      .orderBy('seq', 'desc')
      .execute();
    return {
      'exported-at': new Date().toISOString(),
      account: toUserAccount(row, this.deps.shaping),
      sessions: await this.deps.sessions.list(user.id, user.sessionId),
      memberships: await exportMemberships(this.deps.db, user.id),
      identities: await accountIdentities(this.deps.db, user.id),
      ...(await exportAuditLog(this.deps.db, user.id)),
      'payment-events': events.map((e) => ({
        provider: e.provider,
        id: e.event_id,
        type: e.type,
        'created-at': e.created_at.toISOString(),
        'received-at': e.received_at.toISOString(),
        payload: e.payload,
      })),
      passkeys: await listPasskeys(this.deps.db, user.id),
      files: (
        await this.deps.db
          .selectFrom('stored_file')
          .select(['id', 'purpose', 'name', 'content_type', 'size', 'organization_id', 'created_at'])
          .where('status', '=', 'stored')
          .where((eb) => eb.or([eb('account_id', '=', user.id), eb('uploaded_by', '=', user.id)]))
          .orderBy('created_at')
          .execute()
      ).map((f) => ({
        id: f.id,
        purpose: f.purpose,
        name: f.name,
        'content-type': f.content_type,
        size: Number(f.size),
        'organization-id': f.organization_id,
        'created-at': f.created_at.toISOString(),
      })),
    };
  }

  /** Deletes the account once `password` is its password (403 otherwise). */
  async delete(user: AuthUser): Promise<void> {
    // re-authenticated by the route (`reauth`)
    const account = await this.deps.db.selectFrom('account').select(['id', 'email']).where('id', '=', user.id).executeTakeFirst();
    if (!account) throw unauthorized('Account no longer exists');
    await this.deps.beforeOrganizationsDeleted?.(await solelyOwnedOrganizations(this.deps.db, account.id));
    // first: from here on no instance accepts the account's access tokens
    const ended = await this.deps.refreshTokens.revokeAllForAccount(account.id);
    await this.deps.db.transaction().execute(async (trx) => {
      const pendingAddresses = await trx
        .selectFrom('action_token')
        .select('email')
        .where('account_id', '=', account.id)
        .where('purpose', '=', 'email-change')
        .execute();
      // messages to the account's addresses (their bodies carry its name and live links)
      await trx
        .deleteFrom('mail_outbox')
        .where('to_address', 'in', [account.email, ...pendingAddresses.map((r) => r.email)])
        .execute();
      const families = trx.selectFrom('refresh_family').select('id').where('account_id', '=', account.id);
      await trx.deleteFrom('refresh_token').where('family_id', 'in', families).execute();
      await trx
        .updateTable('refresh_family')
        .set({ user_agent: null, ip: null, revoked_at: sql`coalesce(revoked_at, clock_timestamp())` })
        .where('account_id', '=', account.id)
        .execute();
      // what it invited people to, it can no longer grant (the inviter goes: `invited_by` would just be nulled)
      const revoked = await revokeInvitationsSentBy(trx, account.id, invitationRolesBeyond(undefined));
      for (const invitation of revoked) {
        await appendAudit(trx, {
          action: 'org.invitation-revoked',
          organizationId: invitation.organization_id,
          actor: {},
          target: { type: 'invitation', id: invitation.id },
          details: { email: invitation.email, role: invitation.role, reason: 'inviter-deleted' },
          origin: NO_ORIGIN,
        });
      }
      const shared = await trx
        .selectFrom('membership')
        .innerJoin('organization', 'organization.id', 'membership.organization_id')
        .select(['organization.id', 'membership.role', 'membership.joined_at'])
        .where('membership.account_id', '=', account.id)
        .where('organization.personal', '=', false)
        .execute();
      const profile = await trx.selectFrom('account').select(['email', 'name']).where('id', '=', account.id).executeTakeFirstOrThrow();
      // cascades: action tokens, two-factor secrets and backup codes, passkeys, their challenges, memberships,
      // the personal organization (and, by trigger, those it alone owned);
      // set null: refresh families, payment events, audit entries
      await trx.deleteFrom('account').where('id', '=', account.id).execute();
      const remaining =
        shared.length === 0
          ? []
          : await trx
              .selectFrom('organization')
              .select('id')
              .where(
                'id',
                'in',
                shared.map((o) => o.id),
              )
              .execute();
      for (const org of remaining) {
        await appendAudit(trx, {
          action: 'account.deleted',
          organizationId: org.id,
          actor: {},
          target: { type: 'account', id: account.id },
          details: { role: shared.find((o) => o.id === org.id)?.role ?? null },
          origin: NO_ORIGIN,
        });
        const membership = shared.find((o) => o.id === org.id)!;
        await emitWebhookEvent(trx, org.id, 'member.removed', {
          member: {
            'account-id': account.id,
            email: profile.email,
            name: profile.name,
            role: membership.role,
            'joined-at': new Date(membership.joined_at).toISOString(),
          },
        });
      }
    });
    this.deps.log.info('account/deleted', 'Account deleted', { 'account-id': account.id, sessions: ended.length });
  }
}
