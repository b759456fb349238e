/**
 * The audit log's retention (docs/audit.md, "Retention"): each organization's entries are kept
 * for its plan's `audit-log-retention-days` (the catalogue's; 365 without one), and deleted by
 * the database's one sanctioned delete, `audit_entry_prune_organization(org, before)`, which
 * never deletes an entry a stream of the organization has not delivered yet (the stream's owed
 * rows hold it, by a foreign key too). Run hourly by the stream worker's purge.
 */
import { sql } from 'kysely';
import { type Catalogue, DEFAULT_AUDIT_LOG_RETENTION_DAYS } from '../billing/catalogue.js';
import { ORG_BILLING_COLUMNS, planOf } from '../billing/org-plan.js';
import type { DB } from '../db/database.js';

const DAY_MS = 86_400_000;

/** How many days an organization's entries are kept: its plan's, else the default. */
export function retentionDays(catalogue: Catalogue | undefined, row: Parameters<typeof planOf>[1]): number {
  return (catalogue && planOf(catalogue, row)?.auditLogRetentionDays) ?? DEFAULT_AUDIT_LOG_RETENTION_DAYS;
}

/** Deletes what each organization's retention lets go; resolves to how many entries. */
export async function applyRetention(db: DB, catalogue: Catalogue | undefined, now = new Date()): Promise<number> {
  const shortest = Math.min(DEFAULT_AUDIT_LOG_RETENTION_DAYS, ...(catalogue?.plans ?? []).map((p) => p.auditLogRetentionDays));
  // only organizations that have an entry older than the shortest retention can lose one
  const candidates = await db
    .selectFrom('organization')
    .select(ORG_BILLING_COLUMNS)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('audit_entry')
        .select('organization_id')
        .where('created_at', '<', new Date(now.getTime() - shortest * DAY_MS))
        .where('organization_id', 'is not', null)
        .$narrowType<{ organization_id: string }>(),
    )
    .execute();
  let deleted = 0;
  for (const org of candidates) {
    const before = new Date(now.getTime() - retentionDays(catalogue, org) * DAY_MS);
    const { rows } = await sql<{ n: string }>`select audit_entry_prune_organization(${org.id}::uuid, ${before}) as n`.execute(db);
    deleted += Number(rows[0]?.n ?? 0);
  }
  return deleted;
}
