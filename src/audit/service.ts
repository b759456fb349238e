/**
 * Reading the audit log: an organization's entries, newest first, a page at a time (the route and
 * the `orgs/audit-log` query kind), and an account's own entries for its export.
 *
 * Emails are resolved when read, and only for accounts that are members of the entry's
 * organization now: an admin sees who did what among its members without learning the address
 * an ex-member uses today; an entry of a deleted account keeps only what it recorded.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { AuditDetails } from '../db/schema.js';
import { requestCoercion } from '../http/errors.js';
import type { AuditLogFilters } from './filters.js';
import type { AuditEntry, AuditLogPage, ExportedAuditEntry } from './schemas.js';

/** The newest entries an export carries; `audit-log-truncated` says when there are older ones. */
export const EXPORT_AUDIT_LIMIT = 1000;

const BIGINT_MAX = 9223372036854775807n;

/** `next-cursor`: the last entry's id, base64url; opaque to clients (the admin audit log's too). */
export const encodeAuditCursor = (id: string) => Buffer.from(`a${id}`).toString('base64url');

/** The entry id a cursor names; a cursor this service did not issue is a 400, never a 500 from SQL. */
export function decodeAuditCursor(cursor: string, place: 'query' | 'body'): string {
  const m = /^a([1-9][0-9]{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || BigInt(m[1]) > BIGINT_MAX) throw requestCoercion(place, [{ path: '/cursor', message: 'is not a cursor this service issued' }]);
  return m[1];
}

/** An entry's columns with the emails of current members: what every reader of the log starts from. */
export function auditEntries(db: DB) {
  return db
    .selectFrom('audit_entry as e')
    .leftJoin('membership as am', (j) => j.onRef('am.organization_id', '=', 'e.organization_id').onRef('am.account_id', '=', 'e.actor_account_id'))
    .leftJoin('account as aa', 'aa.id', 'am.account_id')
    .leftJoin('membership as tm', (j) =>
      j.onRef('tm.organization_id', '=', 'e.organization_id').on(sql<boolean>`e.target_type = 'account' and tm.account_id::text = e.target_id`),
    )
    .leftJoin('account as ta', 'ta.id', 'tm.account_id')
    .leftJoin('membership as im', (j) => j.onRef('im.organization_id', '=', 'e.organization_id').onRef('im.account_id', '=', 'e.impersonated_account_id'))
    .leftJoin('account as ia', 'ia.id', 'im.account_id')
    .select([
      'e.id',
      'e.organization_id',
      'e.action',
      'e.actor_account_id',
      'e.actor_api_key_id',
      'e.target_type',
      'e.target_id',
      'e.ip',
      'e.user_agent',
      'e.details',
      'e.created_at',
      'aa.email as actor_email',
      'ta.email as target_email',
      'e.impersonated_account_id',
      'ia.email as impersonated_email',
    ]);
}

/** An entry's columns with the emails its reader may show (each reader resolves them by its own rule). */
export type AuditEntryRow = Awaited<ReturnType<ReturnType<typeof auditEntries>['execute']>>[number];

export function toAuditEntry(r: AuditEntryRow): AuditEntry {
  return {
    id: String(r.id),
    action: r.action,
    actor: {
      'account-id': r.actor_account_id,
      ...(r.actor_email ? { email: r.actor_email } : {}),
      'api-key-id': r.actor_api_key_id,
    },
    target: r.target_type && r.target_id ? { type: r.target_type, id: r.target_id, ...(r.target_email ? { email: r.target_email } : {}) } : null,
    ...(r.impersonated_account_id
      ? { impersonated: { 'account-id': r.impersonated_account_id, ...(r.impersonated_email ? { email: r.impersonated_email } : {}) } }
      : {}),
    ip: r.ip,
    'user-agent': r.user_agent,
    details: (typeof r.details === 'string' ? JSON.parse(r.details) : r.details) as AuditDetails,
    'created-at': new Date(r.created_at).toISOString(),
  };
}

type EntryQuery = ReturnType<typeof auditEntries>;

/** An organization's entries narrowed by the filters (docs/audit.md, "Reading"). */
export function filteredEntries(db: DB, organizationId: string, filters: AuditLogFilters): EntryQuery {
  let query = auditEntries(db).where('e.organization_id', '=', organizationId);
  if (filters.actions) query = query.where('e.action', 'in', filters.actions);
  if (filters.actorId) {
    const actor = filters.actorId;
    query = query.where((eb) => eb.or([eb('e.actor_account_id', '=', actor), eb('e.actor_api_key_id', '=', actor)]));
  }
  if (filters.targetType) query = query.where('e.target_type', '=', filters.targetType);
  if (filters.targetId) query = query.where('e.target_id', '=', filters.targetId);
  if (filters.from) query = query.where('e.created_at', '>=', filters.from);
  if (filters.to) query = query.where('e.created_at', '<', filters.to);
  return query;
}

/**
 * Every entry the filters select, newest first, `batch` rows a query: a keyset walk on the id,
 * so memory holds one batch whatever the selection's size, and entries appended meanwhile (newer
 * ids) neither repeat nor shift what follows.
 */
export async function* walkEntries(db: DB, organizationId: string, filters: AuditLogFilters, batch = 1000): AsyncGenerator<AuditEntryRow[]> {
  let before: string | undefined;
  for (;;) {
    let query = filteredEntries(db, organizationId, filters);
    if (before !== undefined) query = query.where('e.id', '<', sql<string>`${before}::bigint`);
    const rows = await query.orderBy('e.id', 'desc').limit(batch).execute();
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batch) return;
    before = String(rows[rows.length - 1].id);
  }
}

export class AuditLog {
  constructor(private readonly db: DB) {}

  /**
   * One page of an organization's log, newest first. `cursorIn` names where a bad cursor came
   * from in the 400 (`query` for the route, `body` for the query kind).
   */
  async page(
    organizationId: string,
    limit: number,
    cursor: string | undefined,
    cursorIn: 'query' | 'body',
    filters: AuditLogFilters = {},
  ): Promise<AuditLogPage> {
    let query = filteredEntries(this.db, organizationId, filters);
    if (cursor !== undefined) query = query.where('e.id', '<', sql<string>`${decodeAuditCursor(cursor, cursorIn)}::bigint`);
    const rows = await query
      .orderBy('e.id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    return {
      entries: page.map(toAuditEntry),
      'next-cursor': rows.length > limit ? encodeAuditCursor(String(page[page.length - 1].id)) : null,
    };
  }
}

/**
 * The account's own entries (those whose `account_id` it is), newest first, at most
 * EXPORT_AUDIT_LIMIT. Emails are resolved only in the organizations the account still belongs
 * to: an ex-member's export keeps what each entry recorded (an invitation's address, say), never
 * the address its former co-members use today.
 */
export async function exportAuditLog(db: DB, accountId: string): Promise<{ 'audit-log': ExportedAuditEntry[]; 'audit-log-truncated': boolean }> {
  const rows = await auditEntries(db)
    .where('e.account_id', '=', accountId)
    .orderBy('e.id', 'desc')
    .limit(EXPORT_AUDIT_LIMIT + 1)
    .execute();
  const memberOf = new Set(
    (await db.selectFrom('membership').select('organization_id').where('account_id', '=', accountId).execute()).map((m) => m.organization_id),
  );
  return {
    'audit-log': rows.slice(0, EXPORT_AUDIT_LIMIT).map((r) => {
      const resolved = r.organization_id !== null && memberOf.has(r.organization_id) ? r : { ...r, actor_email: null, target_email: null };
      return { ...toAuditEntry(resolved), 'organization-id': r.organization_id };
    }),
    'audit-log-truncated': rows.length > EXPORT_AUDIT_LIMIT,
  };
}
