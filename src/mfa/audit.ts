/**
 * Audit entries about an account's own sign-in methods (two-factor, passkeys, their log-ins):
 * shown in its personal organization's log and in its export. Appended with the caller's
 * transaction, like every entry (src/audit/log.ts).
 */
import type { Kysely } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { AuditDetails, DatabaseSchema } from '../db/schema.js';

export interface AccountAuditEntry {
  action: string;
  accountId: string;
  target?: { type: string; id: string };
  details?: AuditDetails;
  origin: RequestOrigin;
}

/** Appends an entry the account made about itself, in `trx`. */
export async function auditAccount(trx: Kysely<DatabaseSchema>, entry: AccountAuditEntry): Promise<void> {
  const personal = await trx.selectFrom('organization').select('id').where('personal_account_id', '=', entry.accountId).executeTakeFirst();
  await appendAudit(trx, {
    action: entry.action,
    organizationId: personal?.id ?? null,
    accountId: entry.accountId,
    actor: { accountId: entry.accountId },
    target: entry.target ?? { type: 'account', id: entry.accountId },
    details: entry.details,
    origin: entry.origin,
  });
}
