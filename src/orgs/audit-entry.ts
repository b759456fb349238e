/**
 * The audit entry of an organization action, shared by the organization and member services
 * (docs/audit.md).
 */
import type { AuditEntryInput } from '../audit/log.js';
import type { Membership } from '../http/routes.js';

/**
 * An organization action's audit entry: the organization's log, the caller as actor, and the
 * caller's account as the one whose data it is (its export holds what it did). docs/audit.md.
 */
export function orgEntry(
  organizationId: string,
  caller: string | Pick<Membership, 'accountId' | 'apiKeyId'>,
  entry: Pick<AuditEntryInput, 'action' | 'target' | 'details' | 'origin'>,
): AuditEntryInput {
  // an API key acts for no account (its membership's accountId is NO_ACCOUNT): the key is the actor
  if (typeof caller !== 'string' && caller.apiKeyId) return { ...entry, organizationId, accountId: null, actor: { apiKeyId: caller.apiKeyId } };
  const accountId = typeof caller === 'string' ? caller : caller.accountId;
  return { ...entry, organizationId, accountId, actor: { accountId } };
}
