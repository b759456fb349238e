/**
 * The audit log's export (docs/audit.md, "Export"): the whole selection of an organization's
 * entries, newest first as the API pages them, streamed as NDJSON (one entry per line, as the
 * API answers it) or CSV (RFC 4180 with a header row). A keyset walk reads a batch at a time and
 * the response is written as the client takes it, so memory holds a few batches whatever the
 * selection's size. A CSV cell that a spreadsheet would read as a formula (it begins with `=`,
 * `+`, `-`, `@`, a tab or a carriage return) starts with `'` instead.
 */
import { Readable } from 'node:stream';
import type { DB } from '../db/database.js';
import type { AuditLogFilters } from './filters.js';
import type { AuditEntry } from './schemas.js';
import { toAuditEntry, walkEntries } from './service.js';

export type ExportFormat = 'csv' | 'ndjson';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
};

export const CSV_COLUMNS = [
  'id',
  'created-at',
  'action',
  'actor-type',
  'actor-id',
  'actor-email',
  'target-type',
  'target-id',
  'ip',
  'user-agent',
  'details',
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV cell: formula-looking text defused, then quoted when RFC 4180 needs it. */
export function csvCell(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Who acted, as the CSV names it: `account`, `api-key`, or `none` (the system, a provider, an unauthenticated caller). */
function actorOf(entry: AuditEntry): [type: string, id: string | null] {
  if (entry.actor['api-key-id']) return ['api-key', entry.actor['api-key-id']];
  if (entry.actor['account-id']) return ['account', entry.actor['account-id']];
  return ['none', null];
}

export function csvRow(entry: AuditEntry): string {
  const [actorType, actorId] = actorOf(entry);
  return `${[
    entry.id,
    entry['created-at'],
    entry.action,
    actorType,
    actorId,
    entry.actor.email,
    entry.target?.type,
    entry.target?.id,
    entry.ip,
    entry['user-agent'],
    JSON.stringify(entry.details),
  ]
    .map(csvCell)
    .join(',')}\r\n`;
}

const compact = (date: Date) =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** `audit-log-<org id>-<from or all>-<to or now>.<ext>`, the instants in ISO 8601's basic form (`20261201T000000Z`: no colons for file systems). */
export function exportFileName(organizationId: string, filters: AuditLogFilters, format: ExportFormat, now = new Date()): string {
  return `audit-log-${organizationId}-${filters.from ? compact(filters.from) : 'all'}-${compact(filters.to ?? now)}.${format}`;
}

/** The export's body: a stream that reads the next batch only when the client has taken the last one. */
/**
 * Text handed to the stream at a time: below V8's large-object size (a batch's text at once,
 * ~300 KB, went to the old generation and piled up until a full collection: +64 MB at 1M entries).
 */
const CHUNK_CHARS = 32 * 1024;

export function exportStream(db: DB, organizationId: string, filters: AuditLogFilters, format: ExportFormat): Readable {
  async function* lines(): AsyncGenerator<string> {
    if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\r\n`;
    let chunk = '';
    for await (const rows of walkEntries(db, organizationId, filters)) {
      for (const row of rows) {
        const entry = toAuditEntry(row);
        chunk += format === 'csv' ? csvRow(entry) : `${JSON.stringify(entry)}\n`;
        if (chunk.length >= CHUNK_CHARS) {
          yield chunk;
          chunk = '';
        }
      }
    }
    if (chunk) yield chunk;
  }
  // a few batches in flight at most: the walk waits while the client reads
  return Readable.from(lines(), { objectMode: false, highWaterMark: 64 * 1024 });
}
