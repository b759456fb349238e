/**
 * Appending to the audit log. A service appends in the same transaction as the change it
 * records, so an entry exists exactly when the change was committed (as with the mail outbox):
 *
 *   await db.transaction().execute(async (trx) => {
 *     await trx.updateTable('membership').set({ role }).where(...).execute();
 *     await appendAudit(trx, {
 *       action: 'org.member-role-changed', organizationId, accountId: memberId,
 *       actor: { accountId: caller.id }, target: { type: 'account', id: memberId },
 *       details: { role }, origin: originOf(request),
 *     });
 *   });
 *
 * Actions are `area.verb` in kebab case (`account.logged-in`, `org.invitation-sent`,
 * `api-key.created`, `billing.subscription-changed`); the database checks the shape.
 * Details are small flat facts, never a secret: no password, token, key or link.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AuditDetails, DatabaseSchema } from '../db/schema.js';

/** Who acted: an account, an API key (with the account that made it, when known), or neither (the system, a payment provider). */
export interface AuditActor {
  accountId?: string | null;
  apiKeyId?: string | null;
}

/** Where a request came from; both null for what no request caused (a webhook's effect, the mail worker). */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

export interface AuditEntryInput {
  action: string;
  /** the organization whose log shows the entry; an account's own events: its personal organization */
  organizationId?: string | null;
  /** the account the entry concerns (its export includes the entry) */
  accountId?: string | null;
  actor: AuditActor;
  target?: { type: string; id: string };
  details?: AuditDetails;
  origin: RequestOrigin;
}

const USER_AGENT_MAX = 512;
const NO_ORIGIN: RequestOrigin = { ip: null, userAgent: null };

/** The request's client address (as TRUST_PROXY resolves it) and user agent. */
export function originOf(request: FastifyRequest | undefined): RequestOrigin {
  if (!request) return NO_ORIGIN;
  const userAgent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof userAgent === 'string' ? userAgent.slice(0, USER_AGENT_MAX) : null };
}

/** Appends one entry with the caller's executor: pass the transaction of the change it records. */
export async function appendAudit(executor: Kysely<DatabaseSchema>, entry: AuditEntryInput): Promise<void> {
  await executor.insertInto('audit_entry').values({
    organization_id: entry.organizationId ?? null,
    account_id: entry.accountId ?? null,
    actor_account_id: entry.actor.accountId ?? null,
    actor_api_key_id: entry.actor.apiKeyId ?? null,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    ip: entry.origin.ip,
    user_agent: entry.origin.userAgent ? entry.origin.userAgent.slice(0, USER_AGENT_MAX) : null,
    details: JSON.stringify(entry.details ?? {}),
  }).execute();
}
