/**
 * What a directory's change to a membership sets off in the change's own transaction, beside the
 * row (users.ts makes the change): the `member.*` webhook event's member, and revoking the
 * invitations a suspended or removed member sent.
 */
import type { Transaction } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DatabaseSchema } from '../db/schema.js';
import { invitationRolesBeyond, revokeInvitationsSentBy } from '../orgs/data.js';
import type { ScimCaller } from './tokens.js';

/**
 * A member the directory suspends or removes can no longer grant a membership: what it sent is
 * revoked in the change's transaction, each audited with the directory as actor (the accept
 * checks the inviter's standing again: orgs/invitations.ts).
 */
export async function revokeSentInvitations(
  trx: Transaction<DatabaseSchema>,
  caller: ScimCaller,
  inviterId: string,
  reason: string,
  origin: RequestOrigin,
): Promise<void> {
  const revoked = await revokeInvitationsSentBy(trx, inviterId, invitationRolesBeyond(undefined), caller.organizationId);
  for (const invitation of revoked) {
    await appendAudit(trx, {
      action: 'org.invitation-revoked',
      organizationId: caller.organizationId,
      accountId: inviterId,
      actor: {},
      target: { type: 'invitation', id: invitation.id },
      details: { email: invitation.email, role: invitation.role, reason, 'invited-by': inviterId, 'scim-token-id': caller.tokenId },
      origin,
    });
  }
}

/** A `member.*` webhook event's member (docs/webhooks.md), with `suspended` (a directory's suspension grants nothing). */
export function memberEvent(m: {
  id: string;
  email: string;
  name: string | null;
  role: string;
  joined_at: Date;
  suspended_at: Date | null;
}): Record<string, unknown> {
  return {
    'account-id': m.id,
    email: m.email,
    name: m.name,
    role: m.role,
    'joined-at': new Date(m.joined_at).toISOString(),
    suspended: m.suspended_at !== null,
  };
}
