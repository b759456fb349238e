/**
 * The delivery worker (docs/webhooks.md, "Delivery"): claims due deliveries with a lease, so each
 * attempt is made by one instance; makes the attempts (sender.ts) and records each in one
 * transaction with the delivery's next state:
 * - a 2xx: `succeeded`, and the endpoint's failure streak ends;
 * - otherwise: retried after the next delay of WEBHOOK_RETRY_SCHEDULE (counted from this
 *   failure), or `failed` once the schedule is spent (or when the attempt was a manual retry);
 *   an endpoint failing since longer than WEBHOOK_DISABLE_AFTER is disabled, the organization's
 *   admins emailed and the change audited, in the same transaction.
 * Attempts are shared fairly, in the claim itself so that it holds across instances: an endpoint
 * with a live lease gets no other attempt (one in flight per endpoint), an organization's live
 * leases count against WEBHOOK_ORG_CONCURRENCY, and organizations with fewer attempts in flight
 * come first. The worker keeps up to WEBHOOK_CONCURRENCY attempts running and claims again as
 * each ends, so an attempt that hangs until WEBHOOK_TIMEOUT holds its own slot only, never a batch.
 * It wakes at every commit that wrote a delivery (the `webhook_due` notification), when an attempt
 * ends, every WEBHOOK_POLL_MS otherwise (retries falling due), and purges messages older than 30
 * days hourly. A process that dies mid-attempt leaves the delivery (and its endpoint) leased until
 * the lease ends; then any instance attempts it again. The loop itself (slots, nudges, polling,
 * stop, purge) is the durable-job runner, src/runtime/jobs.ts.
 */
import { sql } from 'kysely';
import { appendAudit, NO_ORIGIN } from '../audit/log.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { DB } from '../db/database.js';
import type { WebhookDeliveryStatus } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import { JobWorker, scheduledDelayMs } from '../runtime/jobs.js';
import type { AttemptResult, WebhookSender } from './sender.js';
import type { WebhookSettings } from './settings.js';
import { phrase } from '../i18n/messages.js';

/** Messages (with their deliveries and attempts) are deleted this long after they were written. */
export const DELIVERY_RETENTION_DAYS = 30;

/** How an attempt ended, for metrics: delivered, failed and retried later, failed for good. */
export type AttemptOutcome = 'succeeded' | 'retry' | 'failed';

export interface WebhookWorkerOptions {
  db: DB;
  log: Logger;
  sender: Pick<WebhookSender, 'send'>;
  box: SecretBox;
  notifications: Pick<NotificationService, 'notify'>;
  settings: Pick<WebhookSettings, 'pollMs' | 'leaseMs' | 'concurrency' | 'orgConcurrency' | 'retryScheduleMs' | 'disableAfterMs'>;
  /** told how each attempt ended and how long it took (metrics) */
  onAttempt?: (outcome: AttemptOutcome, seconds: number) => void;
}

interface ClaimedDelivery {
  id: string;
  message_id: string;
  endpoint_id: string;
  organization_id: string;
  attempt_count: number;
  manual: boolean;
  type: string;
  payload: string;
  url: string;
  secret_sealed: string;
  /** the previous secret, while it still signs */
  previous_secret_sealed: string | null;
}

export class WebhookWorker extends JobWorker<ClaimedDelivery> {
  constructor(private readonly options: WebhookWorkerOptions) {
    super({ name: 'webhooks', noun: 'delivery', log: options.log, pollMs: options.settings.pollMs, concurrency: options.settings.concurrency });
  }

  /**
   * Leases at most `limit` due deliveries, fairly: one per endpoint without a live lease, none of
   * an organization whose live leases reach WEBHOOK_ORG_CONCURRENCY, the organizations with the
   * fewest in flight first, then the most overdue. Claims are serialized across instances (a
   * transaction-scoped advisory lock, taken before the statement's snapshot), so every claim sees
   * the leases of those before it: the exclusions hold on PostgreSQL with many instances, and on
   * PGlite alike.
   */
  protected async claim(claimId: string, limit: number): Promise<ClaimedDelivery[]> {
    const { db, settings } = this.options;
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended('saas:webhook-claim', 0))`.execute(trx);
      const { rows } = await sql<ClaimedDelivery>`
        with busy as (
          select e.id as endpoint_id, e.organization_id from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id
          where d.status = 'pending' and d.locked_until > now()
        ), heads as (
          select distinct on (d.endpoint_id) d.id, d.next_attempt_at, e.organization_id
          from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id
          where d.status = 'pending' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until <= now()) and e.enabled
            and not exists (select 1 from busy b where b.endpoint_id = d.endpoint_id)
          order by d.endpoint_id, d.next_attempt_at, d.seq
        ), ranked as (
          select h.id, h.next_attempt_at,
            (select count(*) from busy b where b.organization_id = h.organization_id)
              + row_number() over (partition by h.organization_id order by h.next_attempt_at, h.id) as org_slot
          from heads h
        ), chosen as (
          select id from ranked where org_slot <= ${settings.orgConcurrency}
          order by org_slot, next_attempt_at, id
          limit ${limit}
        ), claimed as (
          update webhook_delivery
          set locked_until = now() + (${settings.leaseMs}::bigint * interval '1 millisecond'), locked_by = ${claimId}
          where id in (select id from chosen) and status = 'pending' and (locked_until is null or locked_until <= now())
          returning id, message_id, endpoint_id, attempt_count, manual
        )
        select c.id, c.message_id, c.endpoint_id, c.attempt_count, c.manual, m.type, m.payload, m.organization_id, e.url, e.secret_sealed,
          case when e.previous_secret_expires_at > now() then e.previous_secret_sealed end as previous_secret_sealed
        from claimed c join webhook_message m on m.id = c.message_id join webhook_endpoint e on e.id = c.endpoint_id`.execute(trx);
      return rows;
    });
  }

  protected async attempt(delivery: ClaimedDelivery, claimId: string): Promise<void> {
    const { box, sender, log } = this.options;
    const about = { 'delivery-id': delivery.id, 'message-id': delivery.message_id, 'webhook-id': delivery.endpoint_id, type: delivery.type };
    const at = new Date();
    let result: AttemptResult;
    try {
      const secrets = [box.open(delivery.secret_sealed, delivery.endpoint_id)];
      if (delivery.previous_secret_sealed) secrets.push(box.open(delivery.previous_secret_sealed, delivery.endpoint_id));
      result = await sender.send({ url: delivery.url, messageId: delivery.message_id, body: delivery.payload, secrets });
    } catch (err) {
      // a secret that does not open (ENCRYPTION_KEY changed): nothing can be signed
      log.error('webhooks/attempt-error', `Could not attempt a webhook delivery: ${(err as Error).message}`, about);
      result = { ok: false, statusCode: null, durationMs: 0, error: 'internal-error', response: null };
    }
    try {
      const outcome = await this.record(delivery, claimId, at, result);
      this.options.onAttempt?.(outcome ?? (result.ok ? 'succeeded' : 'retry'), result.durationMs / 1000);
      const details = {
        ...about,
        'status-code': result.statusCode,
        'duration-ms': result.durationMs,
        error: result.error,
        attempt: delivery.attempt_count + 1,
      };
      if (!outcome) log.warn('webhooks/lease-lost', 'A webhook attempt ended after its lease ran out; another instance may attempt it again', details);
      else if (outcome === 'succeeded') log.info('webhooks/delivered', `Delivered ${delivery.type} message ${delivery.message_id}`, details);
      else if (outcome === 'failed') log.warn('webhooks/failed', `Gave up on ${delivery.type} message ${delivery.message_id}: ${result.error}`, details);
      else log.info('webhooks/retry', `Webhook attempt failed (${result.error}); retrying later`, details);
    } catch (err) {
      // the outcome could not be recorded: the lease runs out and the delivery is attempted again
      log.warn('webhooks/record-failed', `Could not record a webhook attempt: ${(err as Error).message}`, about);
    }
  }

  /** The attempt and the delivery's next state, in one transaction; undefined when the claim was lost. */
  private async record(delivery: ClaimedDelivery, claimId: string, at: Date, result: AttemptResult): Promise<AttemptOutcome | undefined> {
    const { db, settings } = this.options;
    const attempts = delivery.attempt_count + 1;
    const delayMs = result.ok || delivery.manual ? undefined : scheduledDelayMs(settings.retryScheduleMs, attempts);
    const status: WebhookDeliveryStatus = result.ok ? 'succeeded' : delayMs === undefined ? 'failed' : 'pending';
    if (result.ok) return this.recordSuccess(delivery, claimId, at, result, attempts);
    return db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempt')
        .values({
          delivery_id: delivery.id,
          at,
          status_code: result.statusCode,
          duration_ms: result.durationMs,
          error: result.error,
          response: result.response,
        })
        .execute();
      const updated = await trx
        .updateTable('webhook_delivery')
        .set({
          status,
          attempt_count: attempts,
          manual: false,
          next_attempt_at: status === 'pending' ? sql<Date>`now() + (${delayMs}::bigint * interval '1 millisecond')` : null,
          completed_at: status === 'pending' ? null : sql<Date>`now()`,
          locked_until: null,
          locked_by: null,
        })
        .where('id', '=', delivery.id)
        .where('locked_by', '=', claimId)
        .returning('id')
        .executeTakeFirst();
      if (!updated) return undefined;
      await this.noteFailure(trx, delivery, at);
      return status === 'failed' ? 'failed' : 'retry';
    });
  }

  /**
   * A success, the common case, in one statement (one round trip, atomic like a transaction):
   * the attempt, the delivery succeeded while the claim holds, the endpoint's failure streak ended.
   */
  private async recordSuccess(
    delivery: ClaimedDelivery,
    claimId: string,
    at: Date,
    result: AttemptResult,
    attempts: number,
  ): Promise<AttemptOutcome | undefined> {
    const { rows } = await sql<{ id: string }>`
      with attempt as (
        insert into webhook_attempt (delivery_id, at, status_code, duration_ms, error, response)
        values (${delivery.id}, ${at}, ${result.statusCode}, ${result.durationMs}, null, ${result.response})
      ), delivered as (
        update webhook_delivery
        set status = 'succeeded', attempt_count = ${attempts}, manual = false, next_attempt_at = null, completed_at = now(), locked_until = null, locked_by = null
        where id = ${delivery.id} and locked_by = ${claimId}
        returning id, endpoint_id
      ), streak as (
        update webhook_endpoint set failing_since = null
        where id = (select endpoint_id from delivered) and failing_since is not null
      )
      select id from delivered`.execute(this.options.db);
    return rows.length > 0 ? 'succeeded' : undefined;
  }

  /** Starts or continues the endpoint's failure streak; past WEBHOOK_DISABLE_AFTER, disables it and tells its admins. */
  private async noteFailure(trx: DB, delivery: ClaimedDelivery, at: Date): Promise<void> {
    const { disableAfterMs } = this.options.settings;
    const overdue = sql<boolean>`coalesce(e.failing_since, ${at}) <= now() - (${disableAfterMs}::bigint * interval '1 millisecond')`;
    // the values before the statement come from `old`: only the statement that turns the endpoint off announces it
    const { rows } = await sql<{ was_enabled: boolean; enabled: boolean; url: string; failing_since: Date }>`
      update webhook_endpoint e
      set failing_since = coalesce(e.failing_since, ${at}),
        enabled = e.enabled and not ${overdue},
        disabled_reason = case when e.enabled and ${overdue} then 'failing' else e.disabled_reason end,
        updated_at = case when e.enabled and ${overdue} then now() else e.updated_at end
      from (select id, enabled as was_enabled from webhook_endpoint where id = ${delivery.endpoint_id} for update) old
      where e.id = old.id
      returning old.was_enabled, e.enabled, e.url, e.failing_since`.execute(trx);
    const disabled = rows[0];
    if (!disabled?.was_enabled || disabled.enabled) return;
    const failingSince = new Date(disabled.failing_since);
    const org = await trx.selectFrom('organization').select(['name']).where('id', '=', delivery.organization_id).executeTakeFirstOrThrow();
    const url = new URL(disabled.url);
    const days = Math.max(1, Math.round(disableAfterMs / 86_400_000));
    const endpoint = `${url.origin}${url.pathname}`;
    await this.options.notifications.notify(trx, {
      kind: 'webhook-disabled',
      to: { organization: delivery.organization_id, roles: ['owner', 'admin'] },
      title: phrase('A webhook endpoint of {organization} was disabled', { organization: org.name }),
      body: phrase('Every delivery to {endpoint} failed for {days, plural, one {# day} other {# days}}; fix the receiver, then turn it on again.', {
        endpoint,
        days,
      }),
      url: `/orgs/${delivery.organization_id}/webhooks`,
      email: (account) => ({
        kind: 'webhook-disabled',
        to: account.email,
        data: { organization: org.name, organizationId: delivery.organization_id, endpoint, failingSince, days },
      }),
    });
    await appendAudit(trx, {
      action: 'webhook.updated',
      organizationId: delivery.organization_id,
      accountId: null,
      actor: {},
      target: { type: 'webhook', id: delivery.endpoint_id },
      details: { enabled: false, reason: 'failing', host: url.host },
      origin: NO_ORIGIN,
    });
    this.options.log.warn('webhooks/disabled', 'Webhook endpoint disabled: its attempts all failed for too long', {
      'organization-id': delivery.organization_id,
      'webhook-id': delivery.endpoint_id,
      'failing-since': failingSince.toISOString(),
    });
  }

  /** Deletes messages older than the retention, with their deliveries and attempts; returns how many messages. */
  override async purge(olderThanDays = DELIVERY_RETENTION_DAYS): Promise<number> {
    const result = await this.options.db
      .deleteFrom('webhook_message')
      .where('created_at', '<', sql<Date>`now() - (${olderThanDays}::integer * interval '1 day')`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
