/**
 * The audit log streams' delivery worker (docs/audit.md, "Delivery"), on the one durable-job
 * runner (src/runtime/jobs.ts). A claim leases streams that are active, due and owe entries
 * (`FOR UPDATE SKIP LOCKED`: one instance per stream, so one batch in flight per stream and
 * batches in order). An attempt:
 * - forms the stream's batch when it has none: its oldest owed entries, at most 500 or 1 MB,
 *   marked with the batch's id, so a retry sends the same entries under the same id;
 * - sends it (sending.ts);
 * - accepted: the batch's rows go, the stream is delivered through it and due again at once;
 *   refused: the next delay of AUDIT_STREAM_RETRY_SCHEDULE (its last one repeating), the error
 *   kept; failing for AUDIT_STREAM_PAUSE_AFTER, the stream pauses and its organization's owners
 *   and admins are told (a notification and an email) in the same transaction.
 * Every outcome is recorded only while the claim holds (an attempt that outlived its lease
 * changes nothing). A process that dies mid-batch leaves the stream leased until the lease ends;
 * then any instance sends the same batch again. Wakes at every commit that owes a stream an entry
 * (`audit_stream_due`), polls otherwise; its hourly purge is the log's retention (retention.ts).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { appendAudit, NO_ORIGIN } from '../audit/log.js';
import type { AuditEntry } from '../audit/schemas.js';
import { auditEntries, toAuditEntry } from '../audit/service.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { DB } from '../db/database.js';
import type { AuditStreamKind } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import { JobWorker, scheduledDelayMs } from '../runtime/jobs.js';
import type { StreamCredentials, StreamSettings } from './destinations.js';
import type { SendResult, StreamSender } from './sending.js';
import type { AuditStreamSettings } from './settings.js';
import { phrase } from '../i18n/messages.js';

/** The channel that wakes the workers; its notification comes at the commit that owed a stream an entry. */
export const AUDIT_STREAM_DUE_CHANNEL = 'audit_stream_due';
export const BATCH_MAX_ENTRIES = 500;
export const BATCH_MAX_BYTES = 1024 * 1024;

export interface AuditStreamWorkerOptions {
  db: DB;
  log: Logger;
  box: SecretBox;
  sender: Pick<StreamSender, 'send'>;
  notifications: Pick<NotificationService, 'notify'>;
  settings: Pick<AuditStreamSettings, 'pollMs' | 'leaseMs' | 'concurrency' | 'retryScheduleMs' | 'pauseAfterMs'>;
  /** the log's retention, run by the runner's hourly purge */
  retention?: () => Promise<number>;
  /** told how each batch went (metrics) */
  onBatch?: (kind: AuditStreamKind, ok: boolean, entries: number, seconds: number) => void;
}

interface ClaimedStream {
  id: string;
  organization_id: string;
  kind: AuditStreamKind;
  settings: StreamSettings | string;
  credentials_sealed: string;
  batch_id: string | null;
  attempt_count: number;
}

export class AuditStreamWorker extends JobWorker<ClaimedStream> {
  constructor(private readonly options: AuditStreamWorkerOptions) {
    super({ name: 'audit-streams', noun: 'batch', log: options.log, pollMs: options.settings.pollMs, concurrency: options.settings.concurrency });
  }

  protected async claim(claimId: string, limit: number): Promise<ClaimedStream[]> {
    const { rows } = await sql<ClaimedStream>`
      update audit_stream s
      set locked_until = now() + (${this.options.settings.leaseMs}::bigint * interval '1 millisecond'), locked_by = ${claimId}
      where s.id in (
        select d.id from audit_stream d
        where d.status = 'active' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until <= now())
          and exists (select 1 from audit_stream_entry p where p.stream_id = d.id)
        order by d.next_attempt_at
        limit ${limit}
        for update skip locked)
      returning s.id, s.organization_id, s.kind, s.settings, s.credentials_sealed, s.batch_id, s.attempt_count`.execute(this.options.db);
    return rows;
  }

  protected async attempt(stream: ClaimedStream, claimId: string): Promise<void> {
    const { log, box, sender } = this.options;
    const about = { 'audit-stream-id': stream.id, 'organization-id': stream.organization_id, kind: stream.kind };
    const batch = stream.batch_id ? { id: stream.batch_id, entries: await this.entriesOf(stream.id, stream.batch_id) } : await this.form(stream, claimId);
    if (!batch || batch.entries.length === 0) {
      await this.release(stream.id, claimId);
      return;
    }
    const started = performance.now();
    let result: SendResult;
    try {
      const credentials = JSON.parse(box.open(stream.credentials_sealed, stream.id)) as StreamCredentials;
      const settings = (typeof stream.settings === 'string' ? JSON.parse(stream.settings) : stream.settings) as StreamSettings;
      result = await sender.send(
        { kind: stream.kind, settings, credentials },
        { id: batch.id, organizationId: stream.organization_id, entries: batch.entries },
      );
    } catch (err) {
      // credentials that do not open (ENCRYPTION_KEY changed): nothing can be sent
      log.error('audit-streams/attempt-error', `Could not send an audit log batch: ${(err as Error).message}`, about);
      result = { ok: false, statusCode: null, error: 'internal-error: the credentials could not be opened', durationMs: 0 };
    }
    this.options.onBatch?.(stream.kind, result.ok, batch.entries.length, (performance.now() - started) / 1000);
    const details = { ...about, 'batch-id': batch.id, entries: batch.entries.length, 'status-code': result.statusCode, attempt: stream.attempt_count + 1 };
    const recorded = result.ok ? await this.delivered(stream, claimId, batch.id, batch.entries.length) : await this.failed(stream, claimId, result);
    if (!recorded) log.warn('audit-streams/lease-lost', 'An audit log batch ended after its lease ran out; it may be sent again', details);
    else if (result.ok) log.info('audit-streams/delivered', `Delivered ${batch.entries.length} audit entries`, details);
    else log.info('audit-streams/retry', `An audit log batch failed (${result.error}); retrying later`, { ...details, error: result.error });
  }

  /** The entries of the batch in flight, oldest first. */
  private async entriesOf(streamId: string, batchId: string): Promise<AuditEntry[]> {
    const rows = await auditEntries(this.options.db)
      .where('e.id', 'in', (eb) => eb.selectFrom('audit_stream_entry').select('entry_id').where('stream_id', '=', streamId).where('batch_id', '=', batchId))
      .orderBy('e.id', 'asc')
      .execute();
    return rows.map(toAuditEntry);
  }

  /** Fixes the next batch: the oldest owed entries, within the count and size bounds; undefined when the claim was lost. */
  private async form(stream: ClaimedStream, claimId: string): Promise<{ id: string; entries: AuditEntry[] } | undefined> {
    const { db } = this.options;
    const rows = await auditEntries(db)
      .where('e.id', 'in', (eb) =>
        eb
          .selectFrom('audit_stream_entry')
          .select('entry_id')
          .where('stream_id', '=', stream.id)
          .where('batch_id', 'is', null)
          .orderBy('entry_id')
          .limit(BATCH_MAX_ENTRIES),
      )
      .orderBy('e.id', 'asc')
      .execute();
    const entries: AuditEntry[] = [];
    let bytes = 0;
    for (const row of rows) {
      const entry = toAuditEntry(row);
      bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
      if (entries.length > 0 && bytes > BATCH_MAX_BYTES) break;
      entries.push(entry);
    }
    if (entries.length === 0) return { id: '', entries };
    const id = randomUUID();
    const fixed = await db.transaction().execute(async (trx) => {
      const owner = await trx
        .updateTable('audit_stream')
        .set({ batch_id: id })
        .where('id', '=', stream.id)
        .where('locked_by', '=', claimId)
        .where('batch_id', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!owner) return false;
      await trx
        .updateTable('audit_stream_entry')
        .set({ batch_id: id })
        .where('stream_id', '=', stream.id)
        .where('batch_id', 'is', null)
        .where(
          'entry_id',
          'in',
          entries.map((e) => e.id),
        )
        .execute();
      return true;
    });
    return fixed ? { id, entries } : undefined;
  }

  private async release(streamId: string, claimId: string): Promise<void> {
    await this.options.db
      .updateTable('audit_stream')
      .set({ locked_until: null, locked_by: null })
      .where('id', '=', streamId)
      .where('locked_by', '=', claimId)
      .execute();
  }

  private async delivered(stream: ClaimedStream, claimId: string, batchId: string, count: number): Promise<boolean> {
    return this.options.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('audit_stream')
        .set({
          batch_id: null,
          attempt_count: 0,
          next_attempt_at: sql<Date>`now()`,
          last_delivered_at: sql<Date>`now()`,
          delivered_count: sql<string>`delivered_count + ${count}`,
          failing_since: null,
          last_error: null,
          last_error_at: null,
          locked_until: null,
          locked_by: null,
        })
        .where('id', '=', stream.id)
        .where('locked_by', '=', claimId)
        .where('batch_id', '=', batchId)
        .returning('id')
        .executeTakeFirst();
      if (!done) return false;
      await trx.deleteFrom('audit_stream_entry').where('stream_id', '=', stream.id).where('batch_id', '=', batchId).execute();
      return true;
    });
  }

  private async failed(stream: ClaimedStream, claimId: string, result: SendResult): Promise<boolean> {
    const { db, settings } = this.options;
    const attempts = stream.attempt_count + 1;
    const delayMs = scheduledDelayMs(settings.retryScheduleMs, attempts, { repeatLast: true }) ?? 60_000;
    return db.transaction().execute(async (trx) => {
      const overdue = sql<boolean>`coalesce(failing_since, now()) <= now() - (${settings.pauseAfterMs}::bigint * interval '1 millisecond')`;
      const { rows } = await sql<{ paused: boolean; failing_since: Date }>`
        update audit_stream
        set attempt_count = ${attempts},
          next_attempt_at = now() + (${delayMs}::bigint * interval '1 millisecond'),
          last_error = ${result.error}, last_error_at = now(),
          failing_since = coalesce(failing_since, now()),
          status = case when ${overdue} then 'paused' else status end,
          paused_reason = case when ${overdue} then 'failing' else paused_reason end,
          locked_until = null, locked_by = null
        where id = ${stream.id} and locked_by = ${claimId}
        returning status = 'paused' and paused_reason = 'failing' as paused, failing_since`.execute(trx);
      const row = rows[0];
      if (!row) return false;
      if (row.paused) await this.paused(trx, stream, new Date(row.failing_since), result.error ?? 'failed');
      return true;
    });
  }

  /** The stream paused itself: its organization's owners and admins are told, and the change is recorded. */
  private async paused(trx: DB, stream: ClaimedStream, failingSince: Date, error: string): Promise<void> {
    const org = await trx.selectFrom('organization').select(['name']).where('id', '=', stream.organization_id).executeTakeFirstOrThrow();
    const hours = Math.max(1, Math.round((Date.now() - failingSince.getTime()) / 3_600_000));
    await this.options.notifications.notify(trx, {
      kind: 'audit-stream-paused',
      to: { organization: stream.organization_id, roles: ['owner', 'admin'] },
      title: phrase('An audit log stream of {organization} was paused', { organization: org.name }),
      body: phrase(
        'Every batch sent to its {kind} destination failed for {hours, plural, one {# hour} other {# hours}}; fix it, then resume the stream: nothing is skipped.',
        {
          kind: stream.kind,
          hours,
        },
      ),
      url: `/orgs/${stream.organization_id}/audit-log/streams`,
      email: (account) => ({
        kind: 'audit-stream-paused',
        to: account.email,
        data: { organization: org.name, organizationId: stream.organization_id, kind: stream.kind, failingSince, error },
      }),
    });
    await appendAudit(trx, {
      action: 'audit-stream.paused',
      organizationId: stream.organization_id,
      accountId: null,
      actor: {},
      target: { type: 'audit-stream', id: stream.id },
      details: { reason: 'failing', kind: stream.kind },
      origin: NO_ORIGIN,
    });
    this.options.log.warn('audit-streams/paused', 'An audit log stream paused: its batches all failed for too long', {
      'organization-id': stream.organization_id,
      'audit-stream-id': stream.id,
      'failing-since': failingSince.toISOString(),
    });
  }

  override async purge(): Promise<number> {
    return this.options.retention ? this.options.retention() : 0;
  }
}
