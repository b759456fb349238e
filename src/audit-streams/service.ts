/**
 * An organization's audit log streams (docs/audit.md, "Streams"): made, changed, paused,
 * resumed and deleted by admins, each change audited in its own transaction (and so streamed:
 * the entry of a stream's creation is its first); credentials sealed with ENCRYPTION_KEY and
 * never answered back. Delivery is the worker's (worker.ts); a test event is sent at once.
 */
import { phrase } from '../i18n/messages.js';
import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { AuditEntry } from '../audit/schemas.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { DB } from '../db/database.js';
import type { AuditStreamKind, DatabaseSchema } from '../db/schema.js';
import { conflict, notFound } from '../http/errors.js';
import { take } from '../http/rate-limit.js';
import type { Actor } from '../http/routes.js';
import type { EndpointUrlRules } from '../webhooks/endpoint-url.js';
import { checkStream, type StreamCredentials, type StreamInput, type StreamSettings } from './destinations.js';
import type { AuditStream, AuditStreamTestResult, CreatedAuditStream } from './schemas.js';
import type { StreamSender, StreamTarget } from './sending.js';

/** An organization has at most this many streams: each entry is owed to every one. */
export const MAX_STREAMS = 10;

export interface StreamCaller {
  organizationId: string;
  actor: Actor;
  origin: RequestOrigin;
}

export interface AuditStreamServiceDeps {
  db: DB;
  /** seals credentials (purpose `audit-stream`) with the stream id as associated data */
  box: SecretBox;
  rules: EndpointUrlRules;
  sender: Pick<StreamSender, 'send'>;
  testLimiter: RateLimiterAbstract | null;
  /** a stream was resumed or changed: its worker may look now */
  nudge(): void;
}

type StreamRow = Selectable<DatabaseSchema['audit_stream']> & { lag: string | number };

const settingsOf = (row: Pick<StreamRow, 'settings'>): StreamSettings =>
  (typeof row.settings === 'string' ? JSON.parse(row.settings) : row.settings) as StreamSettings;
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toAuditStream(row: StreamRow): AuditStream {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    'paused-reason': row.paused_reason,
    ...settingsOf(row),
    'created-at': new Date(row.created_at).toISOString(),
    'last-delivered-at': iso(row.last_delivered_at),
    delivered: Number(row.delivered_count),
    lag: Number(row.lag),
    'last-error': row.last_error,
    'last-error-at': iso(row.last_error_at),
    'failing-since': iso(row.failing_since),
  };
}

/** The audit entry's view of a stream: its kind and where it goes (a host or a bucket), never a path or a credential. */
function destinationOf(kind: AuditStreamKind, settings: StreamSettings): Record<string, string> {
  const host = (url: string | undefined) => (url && /^https?:\/\//.test(url) ? new URL(url).host : (url ?? ''));
  if (kind === 's3') return { kind, bucket: settings.bucket ?? '', ...(settings.endpoint ? { host: host(settings.endpoint) } : {}) };
  if (kind === 'datadog') return { kind, site: host(settings.site) };
  return { kind, host: host(settings.url) };
}

export class AuditStreamService {
  constructor(private readonly deps: AuditStreamServiceDeps) {}

  private streams(db: DB) {
    return db
      .selectFrom('audit_stream as s')
      .selectAll('s')
      .select(sql<string>`(select count(*) from audit_stream_entry p where p.stream_id = s.id)`.as('lag'));
  }

  async list(organizationId: string): Promise<{ streams: AuditStream[] }> {
    const rows = await this.streams(this.deps.db).where('s.organization_id', '=', organizationId).orderBy('s.created_at').orderBy('s.id').execute();
    return { streams: rows.map(toAuditStream) };
  }

  async get(organizationId: string, id: string, db: DB = this.deps.db): Promise<AuditStream> {
    return toAuditStream(await this.row(db, organizationId, id));
  }

  private async row(db: DB, organizationId: string, id: string): Promise<StreamRow> {
    const row = await this.streams(db).where('s.organization_id', '=', organizationId).where('s.id', '=', id).executeTakeFirst();
    if (!row) throw notFound('No such audit log stream');
    return row;
  }

  private credentialsOf(row: Pick<StreamRow, 'id' | 'credentials_sealed'>): StreamCredentials {
    return JSON.parse(this.deps.box.open(row.credentials_sealed, row.id)) as StreamCredentials;
  }

  private audit(trx: DB, caller: StreamCaller, action: string, id: string, details: Record<string, string | boolean>) {
    return appendAudit(trx, {
      action,
      organizationId: caller.organizationId,
      accountId: 'accountId' in caller.actor ? caller.actor.accountId : null,
      actor: caller.actor,
      target: { type: 'audit-stream', id },
      details,
      origin: caller.origin,
    });
  }

  async create(caller: StreamCaller, input: StreamInput & { kind: AuditStreamKind }): Promise<CreatedAuditStream> {
    const { db, box, rules } = this.deps;
    const checked = await checkStream(input.kind, input, rules);
    const id = randomUUID();
    const created = await db.transaction().execute(async (trx) => {
      // one at a time per organization: the count and the insert agree
      await sql`select pg_advisory_xact_lock(hashtextextended('saas:audit-stream:' || ${caller.organizationId}, 0))`.execute(trx);
      const { n } = await trx
        .selectFrom('audit_stream')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', caller.organizationId)
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_STREAMS)
        throw conflict(phrase('An organization has at most {max} audit log streams', { max: MAX_STREAMS }), { reason: 'too-many-streams' });
      await trx
        .insertInto('audit_stream')
        .values({
          id,
          organization_id: caller.organizationId,
          kind: input.kind,
          settings: JSON.stringify(checked.settings),
          credentials_sealed: box.seal(JSON.stringify(checked.credentials), id),
        })
        .execute();
      // the stream exists already: this entry is its first
      await this.audit(trx, caller, 'audit-stream.created', id, destinationOf(input.kind, checked.settings));
      return this.get(caller.organizationId, id, trx);
    });
    this.deps.nudge();
    return { ...created, ...(input.kind === 'https' ? { secret: checked.credentials.secret } : {}) };
  }

  async update(caller: StreamCaller, id: string, input: StreamInput): Promise<AuditStream> {
    const { db, box, rules } = this.deps;
    const row = await this.row(db, caller.organizationId, id);
    const checked = await checkStream(row.kind, input, rules, { settings: settingsOf(row), credentials: this.credentialsOf(row) });
    const updated = await db.transaction().execute(async (trx) => {
      const changed = await trx
        .updateTable('audit_stream')
        .set({
          settings: JSON.stringify(checked.settings),
          credentials_sealed: box.seal(JSON.stringify(checked.credentials), id),
          updated_at: sql<Date>`now()`,
          // a changed destination is a fresh start: the batch in flight goes to it at once
          attempt_count: 0,
          next_attempt_at: sql<Date>`now()`,
          failing_since: null,
        })
        .where('id', '=', id)
        .where('organization_id', '=', caller.organizationId)
        .returning('id')
        .executeTakeFirst();
      if (!changed) throw notFound('No such audit log stream');
      await this.audit(trx, caller, 'audit-stream.updated', id, { ...destinationOf(row.kind, checked.settings), fields: checked.fields.join(' ') });
      return this.get(caller.organizationId, id, trx);
    });
    this.deps.nudge();
    return updated;
  }

  async remove(caller: StreamCaller, id: string): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('audit_stream')
        .where('id', '=', id)
        .where('organization_id', '=', caller.organizationId)
        .returning(['kind', 'settings'])
        .executeTakeFirst();
      if (!gone) throw notFound('No such audit log stream');
      await this.audit(trx, caller, 'audit-stream.deleted', id, destinationOf(gone.kind, settingsOf(gone)));
    });
  }

  /** Pauses (entries keep being owed to it) or resumes (from where it stopped: nothing is skipped). */
  async setStatus(caller: StreamCaller, id: string, status: 'active' | 'paused'): Promise<AuditStream> {
    const result = await this.deps.db.transaction().execute(async (trx) => {
      const changed = await trx
        .updateTable('audit_stream')
        .set(
          status === 'paused'
            ? { status, paused_reason: 'manual', updated_at: sql<Date>`now()` }
            : { status, paused_reason: null, updated_at: sql<Date>`now()`, attempt_count: 0, next_attempt_at: sql<Date>`now()`, failing_since: null },
        )
        .where('id', '=', id)
        .where('organization_id', '=', caller.organizationId)
        .where('status', '!=', status)
        .returning(['kind', 'settings'])
        .executeTakeFirst();
      // already so: nothing changes, nothing is recorded
      if (changed)
        await this.audit(trx, caller, status === 'paused' ? 'audit-stream.paused' : 'audit-stream.resumed', id, { reason: 'manual', kind: changed.kind });
      return this.get(caller.organizationId, id, trx);
    });
    if (status === 'active') this.deps.nudge();
    return result;
  }

  /**
   * Sends one test event to the stream's destination now and says how it went. Nothing is
   * kept or retried (it is a probe the admin waits for); the stream's state is unchanged.
   */
  async test(caller: StreamCaller, id: string): Promise<AuditStreamTestResult> {
    const row = await this.row(this.deps.db, caller.organizationId, id);
    if (this.deps.testLimiter) await take(this.deps.testLimiter, caller.organizationId);
    const event: AuditEntry = {
      id: '0',
      action: 'audit-stream.test',
      actor: { 'account-id': 'accountId' in caller.actor ? caller.actor.accountId : null, 'api-key-id': null },
      target: { type: 'audit-stream', id },
      ip: null,
      'user-agent': null,
      details: { test: true },
      'created-at': new Date().toISOString(),
    };
    const target: StreamTarget = { kind: row.kind, settings: settingsOf(row), credentials: this.credentialsOf(row) };
    const result = await this.deps.sender.send(target, { id: `test-${randomUUID()}`, organizationId: caller.organizationId, entries: [event] });
    return { delivered: result.ok, 'status-code': result.statusCode, error: result.error, 'duration-ms': result.durationMs };
  }
}
