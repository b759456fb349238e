/**
 * The Stripe sync (docs/billing.md, "When Stripe is down"): a durable-job queue
 * (src/runtime/jobs.ts) on `billing_job`, holding seat quantity changes and meter events.
 * - Jobs are written in the transaction of their cause: a trigger on memberships and
 *   invitations (migration 0021) writes a `seats` job for an organization with a running
 *   subscription, unless one not yet attempted waits already (changes coalesce: what is sent is
 *   the count when sending); `usage.record` writes a `meter` job the same way. Their commit
 *   notifies `billing_due`, which wakes every instance.
 * - One organization's jobs go one at a time across instances, in `id` order: the claim takes
 *   only an organization's oldest pending job, and only while no job of it is leased
 *   (claims serialized by an advisory lock, as the webhooks' are).
 * - The first attempt fixes what is sent (the seat count, or the meter's unsent records and
 *   their sum) and its Idempotency-Key (`seats-<uuid>`, `usage-<uuid>`, sync-keys.ts: the same on
 *   every attempt, so Stripe applies it once, and unique across databases). A count equal to what
 *   Stripe has sends nothing.
 * - A failed call is tried again after BILLING_RETRY_SCHEDULE (the last delay repeated, never given up).
 * - A `subscription` job (subscription-read.ts) retrieves a subscription whose events tied and
 *   hands it to the reader the payments module gave (useSubscriptionReader).
 * - A key Stripe refuses (400 `idempotency_error`: it saw the key with other parameters), or a
 *   meter identifier it has that is not provably ours, is an error: logged, kept in `last_error`,
 *   and the next attempt sends the same thing under a new key (never the refused key forever).
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { JobWorker, scheduledDelayMs } from '../runtime/jobs.js';
import { orgBilling } from './org-plan.js';
import type { BillingSettings } from './settings.js';
import { StripeGatewayError, type BillingGateway } from './stripe-gateway.js';
import { isOwnSyncKey, newSyncKey } from './sync-keys.js';
import { meterTarget, perSeatItem, queueExpiredInvitationSeats, seatCall } from './sync-targets.js';

/** The channel a committed job notifies. */
export const BILLING_DUE_CHANNEL = 'billing_due';
const RETENTION_DAYS = 30;

/** Applies a subscription as Stripe has it now (the payments module's webhook effects). */
export type SubscriptionReader = (subscription: Record<string, unknown>) => Promise<void>;

interface ClaimedJob {
  id: string;
  organization_id: string;
  kind: 'seats' | 'meter' | 'subscription';
  meter: string | null;
  subscription_id: string | null;
  idempotency_key: string | null;
  quantity: number | null;
  value: string | null;
  event_at: Date | null;
  attempts: number;
}

/** What one attempt sends, fixed at the first attempt. */
type Call =
  | { kind: 'seats'; itemId: string; quantity: number; key: string }
  | { kind: 'meter'; eventName: string; customerId: string; value: number; identifier: string; at: Date };

export interface StripeSyncOptions {
  db: DB;
  log: Logger;
  gateway: BillingGateway | undefined;
  settings: Pick<BillingSettings, 'catalogue' | 'proration' | 'retryScheduleMs'>;
  pollMs: number;
  leaseMs: number;
}

const failureOf = (err: unknown) => (err instanceof StripeGatewayError ? `${err.failure}${err.code ? ` (${err.code})` : ''}` : (err as Error).message);

export class StripeSync extends JobWorker<ClaimedJob> {
  private reader: SubscriptionReader | undefined;

  constructor(private readonly options: StripeSyncOptions) {
    super({ name: 'billing-sync', noun: 'job', log: options.log, pollMs: options.pollMs, concurrency: 5 });
  }

  /** Who applies a re-read subscription (the payments module, which owns what events do). */
  useSubscriptionReader(reader: SubscriptionReader): void {
    this.reader = reader;
  }

  protected claim(claimId: string, limit: number): Promise<ClaimedJob[]> {
    const { db, leaseMs } = this.options;
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended('saas:billing-claim', 0))`.execute(trx);
      const { rows } = await sql<ClaimedJob>`
        with heads as (
          select distinct on (organization_id) id, organization_id, next_attempt_at, locked_until
          from billing_job where status = 'pending' order by organization_id, id
        ), chosen as (
          select id from heads where next_attempt_at <= now() and (locked_until is null or locked_until <= now())
          order by next_attempt_at, id limit ${limit}
        )
        update billing_job
        set locked_until = now() + (${leaseMs}::bigint * interval '1 millisecond'), locked_by = ${claimId}, attempts = attempts + 1
        where id in (select id from chosen)
        returning id, organization_id, kind, meter, subscription_id, idempotency_key, quantity, value, event_at, attempts`.execute(trx);
      return rows;
    });
  }

  protected async attempt(job: ClaimedJob, claimId: string): Promise<void> {
    const { log, gateway } = this.options;
    const about = { 'job-id': job.id, 'organization-id': job.organization_id, kind: job.kind, attempt: job.attempts };
    if (job.kind === 'subscription') return this.readSubscription(job, claimId, about);
    const call = job.idempotency_key === null ? await this.prepare(job, claimId) : await this.prepared(job);
    if (call === undefined) {
      await this.finish(job, claimId, 'skipped');
      return;
    }
    if (!gateway) {
      // no STRIPE_SECRET_KEY any more: nothing can go; kept, and said
      log.error('billing-sync/not-configured', 'A Stripe sync job waits, and STRIPE_SECRET_KEY is not set', about);
      await this.retry(job, claimId, 'billing-not-configured');
      return;
    }
    let outcome: 'sent' | 'duplicate' = 'sent';
    try {
      if (call.kind === 'seats') await gateway.setItemQuantity(call.itemId, call.quantity, this.options.settings.proration, call.key);
      else
        outcome = await gateway.sendMeterEvent({
          eventName: call.eventName,
          customerId: call.customerId,
          value: call.value,
          identifier: call.identifier,
          timestamp: call.at,
        });
    } catch (err) {
      const failure = failureOf(err);
      if (err instanceof StripeGatewayError && err.failure === 'idempotency') {
        // the key was used with other parameters (another database's job, or an older key form): retrying it can never pass
        await this.rekey(job, claimId, 'idempotency_error', about);
        return;
      }
      const next = await this.retry(job, claimId, failure);
      log.warn('billing-sync/retry', `A Stripe sync call failed (${failure}); trying again at ${next?.toISOString() ?? 'the lease end'}`, {
        ...about,
        error: failure,
      });
      return;
    }
    if (outcome === 'duplicate' && call.kind === 'meter' && !isOwnSyncKey('meter', call.identifier)) {
      // an identifier of the older form may be another database's event: ours was not counted
      await this.rekey(job, claimId, 'duplicate_meter_event', about);
      return;
    }
    await this.finish(job, claimId, 'sent', call.kind === 'seats' ? call.quantity : undefined);
    log.info(
      'billing-sync/sent',
      call.kind === 'seats'
        ? `Seat quantity ${call.quantity} sent to Stripe`
        : outcome === 'duplicate'
          ? `Meter event of ${call.value} already in Stripe (its identifier is ours)`
          : `Meter event of ${call.value} sent to Stripe`,
      about,
    );
  }

  /** Retrieves a subscription whose events tied and applies it; one Stripe no longer has is skipped. */
  private async readSubscription(job: ClaimedJob, claimId: string, about: Record<string, string | number>): Promise<void> {
    const { gateway, log } = this.options;
    if (!this.reader) {
      // the payments module gives it at start-up, just after this worker starts
      await this.retry(job, claimId, 'no subscription reader yet');
      return;
    }
    if (!gateway || !job.subscription_id) {
      log.warn(
        'billing-sync/subscription-unread',
        'Events of a subscription tied and it cannot be re-read (no STRIPE_SECRET_KEY): their arrival order stands',
        about,
      );
      await this.finish(job, claimId, 'skipped');
      return;
    }
    let found = false;
    try {
      const subscription = await gateway.retrieveSubscription(job.subscription_id);
      if (subscription) await this.reader(subscription);
      found = subscription !== undefined;
    } catch (err) {
      const next = await this.retry(job, claimId, failureOf(err));
      log.warn('billing-sync/retry', `Re-reading a subscription failed (${failureOf(err)}); trying again at ${next?.toISOString() ?? 'the lease end'}`, about);
      return;
    }
    await this.finish(job, claimId, found ? 'sent' : 'skipped');
    log.info(
      'billing-sync/subscription-read',
      found ? 'A subscription whose events tied, applied as Stripe has it now' : 'Stripe no longer has the subscription',
      about,
    );
  }

  /**
   * Stripe refused the job's key (`idempotency_error`) or has its meter identifier from an event
   * not provably ours: said as an error, kept in `last_error`, and the job keeps what it sends
   * under a new key for its next attempt (so it is never retried forever with a refused key).
   */
  private async rekey(job: ClaimedJob, claimId: string, refusal: string, about: Record<string, string | number>): Promise<void> {
    const key = newSyncKey(job.kind === 'seats' ? 'seats' : 'meter');
    const next = await this.retry(job, claimId, `${refusal}: Stripe refused the key ${job.idempotency_key}; the next attempt sends it as ${key}`, key);
    this.options.log.error('billing-sync/key-refused', `Stripe refused a sync job's key (${refusal}); the job goes again under a new key`, {
      ...about,
      error: refusal,
      'refused-key': job.idempotency_key ?? '',
      'next-key': key,
      'next-attempt-at': next?.toISOString() ?? '',
    });
  }

  /** The first attempt: what to send, fixed on the job (under the claim); undefined: nothing to send. */
  private async prepare(job: ClaimedJob, claimId: string): Promise<Call | undefined> {
    const { db } = this.options;
    return db.transaction().execute(async (trx) => {
      if (job.kind === 'seats') {
        const call = await seatCall(trx, this.options.settings.catalogue, job.organization_id, newSyncKey('seats'));
        if (!call) return undefined;
        await trx
          .updateTable('billing_job')
          .set({ idempotency_key: call.key, quantity: call.quantity })
          .where('id', '=', job.id)
          .where('locked_by', '=', claimId)
          .execute();
        return call;
      }
      const target = await meterTarget(trx, this.options.settings.catalogue, job.organization_id, job.meter);
      if (!target) return undefined;
      // the meter's billable records not yet sent go in this event: its identifier names them (their job)
      const { rows } = await sql<{ value: string | null; at: Date | null }>`
        with taken as (
          update usage_record set job_id = ${job.id}
          where organization_id = ${job.organization_id} and meter = ${job.meter} and job_id is null and billable
          returning quantity, recorded_at
        ) select sum(quantity)::text as value, max(recorded_at) as at from taken`.execute(trx);
      const value = Number(rows[0]?.value ?? 0);
      if (value <= 0 || !rows[0]?.at) return undefined;
      const identifier = newSyncKey('meter');
      await trx
        .updateTable('billing_job')
        .set({ idempotency_key: identifier, value: String(value), event_at: rows[0].at })
        .where('id', '=', job.id)
        .where('locked_by', '=', claimId)
        .execute();
      return { kind: 'meter', ...target, value, identifier, at: new Date(rows[0].at) };
    });
  }

  /** A later attempt sends what the first fixed. */
  private async prepared(job: ClaimedJob): Promise<Call | undefined> {
    const { db } = this.options;
    if (job.kind === 'seats') {
      const row = await orgBilling(db, job.organization_id);
      const item = row && perSeatItem(this.options.settings.catalogue, row);
      return item && job.quantity !== null ? { kind: 'seats', itemId: item.id, quantity: job.quantity, key: job.idempotency_key! } : undefined;
    }
    const target = await meterTarget(db, this.options.settings.catalogue, job.organization_id, job.meter);
    return target && job.value !== null && job.event_at
      ? { kind: 'meter', ...target, value: Number(job.value), identifier: job.idempotency_key!, at: new Date(job.event_at) }
      : undefined;
  }

  private async finish(job: ClaimedJob, claimId: string, status: 'sent' | 'skipped', quantity?: number): Promise<void> {
    await this.options.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('billing_job')
        .set({ status, sent_at: sql<Date>`now()`, locked_until: null, locked_by: null, last_error: null })
        .where('id', '=', job.id)
        .where('locked_by', '=', claimId)
        .returning('id')
        .executeTakeFirst();
      if (done && quantity !== undefined)
        await trx.updateTable('organization').set({ seat_quantity_sent: quantity }).where('id', '=', job.organization_id).execute();
    });
  }

  /** The next attempt after the schedule's delay; `key` replaces the job's key for it. */
  private async retry(job: ClaimedJob, claimId: string, error: string, key?: string): Promise<Date | undefined> {
    const delay = scheduledDelayMs(this.options.settings.retryScheduleMs, job.attempts, { repeatLast: true }) ?? 60_000;
    const row = await this.options.db
      .updateTable('billing_job')
      .set({
        next_attempt_at: sql<Date>`now() + (${delay}::bigint * interval '1 millisecond')`,
        last_error: error.slice(0, 500),
        locked_until: null,
        locked_by: null,
        ...(key ? { idempotency_key: key } : {}),
      })
      .where('id', '=', job.id)
      .where('locked_by', '=', claimId)
      .returning('next_attempt_at')
      .executeTakeFirst();
    return row && new Date(row.next_attempt_at);
  }

  /**
   * The hourly pass: deletes old finished jobs, and, since an invitation's expiry changes a seat
   * count without a write, writes a `seats` job for each organization with a running subscription
   * whose invitations expired in the last two hours (a job that finds the count unchanged sends
   * nothing; several instances' jobs coalesce).
   */
  protected override async purge(): Promise<number> {
    await queueExpiredInvitationSeats(this.options.db);
    return this.deleteFinished();
  }

  private async deleteFinished(): Promise<number> {
    const result = await this.options.db
      .deleteFrom('billing_job')
      .where('status', 'in', ['sent', 'skipped'])
      .where('created_at', '<', sql<Date>`now() - (${RETENTION_DAYS}::integer * interval '1 day')`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
