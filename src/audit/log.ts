/**
 * Appending to the audit log. A service appends in the same transaction as the change it
 * records, so an entry exists exactly when the change was committed (as with the mail outbox):
 *
 *   await db.transaction().execute(async (trx) => {
 *     await trx.updateTable('membership').set({ role }).where(...).execute();
 *     await appendAudit(trx, {
 *       action: 'org.member-role-changed', organizationId, accountId: caller.accountId,
 *       actor: { accountId: caller.accountId }, target: { type: 'account', id: memberId },
 *       details: { role }, origin,
 *     });
 *   });
 *
 * An account's own events (log-ins, password, email, sessions) go to its personal organization:
 * `appendAccountAudit(trx, { action: 'account.password-changed', accountId, origin })`.
 *
 * Actions are `area.verb` in kebab case (`account.logged-in`, `org.invitation-sent`,
 * `api-key.created`, `billing.subscription-changed`); the database checks the shape.
 * Details are small flat facts, never a secret: no password, token, key or link.
 * Handlers hand services `originOf(request)`; services never see the request. See docs/audit.md.
 *
 * Impersonation (src/admin/, docs/admin.md): the origin of a request of an impersonated session
 * names the platform admin acting; every entry written with it records the admin as the actor
 * and the account as `impersonated`, and goes to the admin audit log too. This happens here,
 * once, so no service has to know about impersonation.
 */
import type { FastifyRequest } from 'fastify';
import { sql, type Kysely, type RawBuilder } from 'kysely';
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
  /** the platform admin acting, when the request came from an impersonated session (the access token's `act`) */
  impersonatorId?: string;
}

/** The origin of a request that came in: its client address is always known (rate limits count by it). */
export interface ClientOrigin extends RequestOrigin {
  ip: string;
}

export interface AuditEntryInput {
  action: string;
  /** the organization whose log shows the entry; an account's own events: its personal organization */
  organizationId?: string | null;
  /** the account whose data the entry is (its export includes the entry) */
  accountId?: string | null;
  actor: AuditActor;
  target?: { type: string; id: string };
  details?: AuditDetails;
  origin: RequestOrigin;
  /** the account an admin acted as (set from `origin` for the changes of an impersonated session; src/admin/ sets it on its own entries) */
  impersonatedAccountId?: string;
  /** shown in the admin audit log (every admin action; implied for the changes of an impersonated session) */
  adminLog?: boolean;
}

/** An account's own event: shown in its personal organization's log, and in its export. */
export interface AccountAuditInput extends Omit<AuditEntryInput, 'organizationId' | 'accountId' | 'actor'> {
  accountId: string;
  /** default: the account itself; `{}` when no one acted as the account (a failed log-in, a detected token reuse) */
  actor?: AuditActor;
}

/** At most `count` entries of the action for the account within `seconds`: beyond it nothing is appended. */
export interface AuditCap {
  count: number;
  seconds: number;
}

const USER_AGENT_MAX = 512;
/** The origin of what no request caused. */
export const NO_ORIGIN: RequestOrigin = { ip: null, userAgent: null };

/** The request's client address (as TRUST_PROXY resolves it) and user agent. */
export function originOf(request: FastifyRequest): ClientOrigin;
export function originOf(request: FastifyRequest | undefined): RequestOrigin;
export function originOf(request: FastifyRequest | undefined): RequestOrigin {
  if (!request) return NO_ORIGIN;
  const userAgent = request.headers['user-agent'];
  const impersonatorId = request.user?.actor?.id;
  return {
    ip: request.ip ?? null,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, USER_AGENT_MAX) : null,
    ...(impersonatorId ? { impersonatorId } : {}),
  };
}

function values(entry: AuditEntryInput, organizationId: string | null | RawBuilder<string | null>) {
  // in an impersonated session the account did nothing itself: the admin acted as it
  const impersonated = entry.origin.impersonatorId && entry.actor.accountId ? entry.actor.accountId : undefined;
  return {
    organization_id: organizationId,
    account_id: entry.accountId ?? null,
    actor_account_id: impersonated ? entry.origin.impersonatorId! : (entry.actor.accountId ?? null),
    actor_api_key_id: entry.actor.apiKeyId ?? null,
    impersonated_account_id: impersonated ?? entry.impersonatedAccountId ?? null,
    admin_log: impersonated !== undefined || entry.adminLog === true,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    ip: entry.origin.ip,
    user_agent: entry.origin.userAgent ? entry.origin.userAgent.slice(0, USER_AGENT_MAX) : null,
    details: JSON.stringify(entry.details ?? {}),
  };
}

/** Appends one entry with the caller's executor: pass the transaction of the change it records. */
export async function appendAudit(executor: Kysely<DatabaseSchema>, entry: AuditEntryInput): Promise<void> {
  await executor
    .insertInto('audit_entry')
    .values(values(entry, entry.organizationId ?? null))
    .execute();
}

/**
 * Appends an account's own event to its personal organization's log (found in the same
 * statement). With `cap`, nothing is appended once the account has `cap.count` entries of the
 * action within `cap.seconds`: what an unauthenticated caller can cause (a failed log-in) cannot
 * grow the log without bound. Resolves to whether the entry was appended.
 */
export async function appendAccountAudit(executor: Kysely<DatabaseSchema>, entry: AccountAuditInput, cap?: AuditCap): Promise<boolean> {
  const full: AuditEntryInput = { ...entry, actor: entry.actor ?? { accountId: entry.accountId } };
  const personal = sql<string | null>`(select id from organization where personal_account_id = ${entry.accountId})`;
  const row = values(full, personal);
  if (!cap) {
    await executor.insertInto('audit_entry').values(row).execute();
    return true;
  }
  const columns = Object.keys(row) as Array<keyof typeof row>;
  // parameters in a SELECT list have no type from their column: say it
  const cast: Partial<Record<keyof typeof row, RawBuilder<unknown>>> = {
    account_id: sql`uuid`,
    actor_account_id: sql`uuid`,
    actor_api_key_id: sql`uuid`,
    impersonated_account_id: sql`uuid`,
    admin_log: sql`boolean`,
    details: sql`jsonb`,
  };
  const result = await sql<{ id: string }>`
    insert into audit_entry (${sql.join(columns.map((c) => sql.ref(c)))})
    select ${sql.join(columns.map((c) => (cast[c] ? sql`cast(${row[c]} as ${cast[c]})` : sql`${row[c]}`)))}
    where (select count(*) from (
      select 1 from audit_entry
      where account_id = ${entry.accountId} and action = ${entry.action} and created_at > now() - make_interval(secs => ${cap.seconds})
      limit ${cap.count}) recent) < ${cap.count}
    returning id`.execute(executor);
  return result.rows.length > 0;
}
