/**
 * Usage (docs/billing.md, "Usage and limits" and "Adding a meter"):
 * - `record(trx, {organizationId, meter, quantity, id})` in the caller's transaction: once per
 *   organization, meter and id. It adds to the period's counter (`usage_counter`, whose row lock
 *   serializes concurrent recordings), and the recording that takes the period from below the
 *   plan's `soft` to it or more emails the owners and admins and emits `usage.threshold-reached`,
 *   once per organization, meter and period, across instances. A record made while the organization
 *   has a Stripe customer and a plan with a metered price for the meter is billable (decided then,
 *   stored with it), and a `meter` job takes it to Stripe; no other record is ever sent.
 * - the usage gate of `limit` routes (src/http/usage-gate.ts): 402 `usage-limit` at the hard
 *   limit; a request with an organization's API key counts one `api-calls`, checked and counted
 *   under the counter's lock, so concurrent requests at the limit never pass it.
 */
import { phrase } from '../i18n/messages.js';
import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { API_CALLS_METER_ID, type UsageGate } from '../http/usage-gate.js';
import type { Logger } from '../logging/logger.js';
import type { Mail } from '../mail/index.js';
import type { NotificationService } from '../notifications/service.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import type { Catalogue, CataloguePlan } from './catalogue.js';
import { type OrgBillingRow, orgBilling, type Period, periodOf, planOf } from './org-plan.js';
import { queueSyncJobOnce } from './subscription-read.js';

export interface UsageRecord {
  organizationId: string;
  meter: string;
  /** a whole number >= 1 */
  quantity: number;
  /** unique per organization and meter: recording it again records nothing */
  id: string;
}

export interface UsageDeps {
  db: DB;
  catalogue: () => Catalogue;
  mail: Pick<Mail, 'enqueue'>;
  notifications: Pick<NotificationService, 'notify'>;
  log: Logger;
  appUrl: string;
}

/** The shape of GET /api/orgs/:id/usage. */
export interface OrganizationUsage {
  plan: string | null;
  period: { start: string; end: string };
  seats: { used: number; included: number; max: number | null };
  meters: Array<{ meter: string; name: string; used: number; soft: number | null; hard: number | null; daily: Array<{ date: string; used: number }> }>;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

export class UsageService implements UsageGate {
  constructor(private readonly deps: UsageDeps) {}

  meters(): readonly string[] {
    return this.deps.catalogue().meters.map((m) => m.id);
  }

  /**
   * Records usage through `trx`, the transaction of the action it measures. Resolves to whether
   * it was new (false: this id was recorded before) and the period's usage after it.
   */
  async record(trx: DB, input: UsageRecord): Promise<{ recorded: boolean; used: number }> {
    const row = await orgBilling(trx, input.organizationId);
    if (!row) throw new TypeError(`usage.record: no organization ${input.organizationId}`);
    return this.recordFor(trx, row, input);
  }

  /** `record` for an organization whose billing row was just read. */
  private async recordFor(trx: DB, row: OrgBillingRow, input: UsageRecord): Promise<{ recorded: boolean; used: number }> {
    const { organizationId, meter, quantity, id } = input;
    if (!this.meters().includes(meter)) throw new TypeError(`usage.record: the meter "${meter}" is not in the catalogue`);
    if (!Number.isSafeInteger(quantity) || quantity < 1) throw new TypeError('usage.record: quantity must be a whole number >= 1');
    if (typeof id !== 'string' || id.length < 1 || id.length > 200) throw new TypeError('usage.record: id must be 1..200 characters');
    const plan = planOf(this.deps.catalogue(), row);
    // billed or not is decided now, in the recording's transaction: usage of a free plan (or after a
    // cancellation) is never sent later with the first paid event
    const billable = Boolean(row.billing_customer_id && plan?.prices?.metered[meter]);
    const inserted = await trx
      .insertInto('usage_record')
      .values({ organization_id: organizationId, meter, id, quantity, billable })
      .onConflict((oc) => oc.columns(['organization_id', 'meter', 'id']).doNothing())
      .returning('recorded_at')
      .executeTakeFirst();
    const period = periodOf(row, new Date());
    if (!inserted) return { recorded: false, used: await this.usedIn(trx, organizationId, meter, period) };
    const counter = await trx
      .insertInto('usage_counter')
      .values({ organization_id: organizationId, meter, period_start: period.start, used: quantity })
      .onConflict((oc) => oc.columns(['organization_id', 'meter', 'period_start']).doUpdateSet({ used: sql`usage_counter.used + ${quantity}` }))
      .returning(['used', 'soft_notified'])
      .executeTakeFirstOrThrow();
    const used = Number(counter.used);
    const soft = plan?.limits[meter]?.soft ?? null;
    if (soft !== null && used >= soft && used - quantity < soft && !counter.soft_notified) {
      await this.thresholdReached(trx, row, plan!, meter, used, soft, period);
    }
    const hard = plan?.limits[meter]?.hard ?? null;
    // the recording that takes the period to the hard limit tells the owners and admins, once a period
    if (hard !== null && used >= hard && used - quantity < hard) await this.limitReached(trx, organizationId, meter, hard);
    if (billable) await this.queueMeterEvent(trx, organizationId, meter);
    return { recorded: true, used };
  }

  /** The usage gate of `limit` routes. */
  async admit(request: FastifyRequest, meter: string, pathOrganizationId: string | undefined): Promise<void> {
    if (meter === API_CALLS_METER_ID) {
      // only requests made with an organization's key count, and are limited; a person's are neither
      const key = request.apiKey;
      if (!key) return;
      await this.deps.db.transaction().execute(async (trx) => {
        const { row, hard, used } = await this.standing(trx, key.organizationId, meter, true);
        if (!row) return;
        if (hard !== null && used >= hard) throw usageLimit(meter, hard, used);
        // the request's id (a UUID per request) names the usage
        await this.recordFor(trx, row, { organizationId: key.organizationId, meter, quantity: 1, id: String(request.id) });
      });
      return;
    }
    if (!pathOrganizationId) return;
    const { hard, used } = await this.standing(this.deps.db, pathOrganizationId, meter, false);
    if (hard !== null && used >= hard) throw usageLimit(meter, hard, used);
  }

  /** The organization's plan limit and usage of `meter` this period; `lock` holds the counter's row until the transaction ends. */
  private async standing(db: DB, organizationId: string, meter: string, lock: boolean) {
    const row = await orgBilling(db, organizationId);
    if (!row) return { row, hard: null, period: undefined, used: 0 };
    const plan = planOf(this.deps.catalogue(), row);
    const period = periodOf(row, new Date());
    const hard = plan?.limits[meter]?.hard ?? null;
    if (hard === null) return { row, hard, period, used: 0 };
    // the row exists before it is locked: the first requests of a period wait for each other too
    if (lock) {
      await db
        .insertInto('usage_counter')
        .values({ organization_id: organizationId, meter, period_start: period.start, used: 0 })
        .onConflict((oc) => oc.columns(['organization_id', 'meter', 'period_start']).doNothing())
        .execute();
    }
    let query = db
      .selectFrom('usage_counter')
      .select('used')
      .where('organization_id', '=', organizationId)
      .where('meter', '=', meter)
      .where('period_start', '=', period.start);
    if (lock) query = query.forUpdate();
    const counter = await query.executeTakeFirst();
    return { row, hard, period, used: Number(counter?.used ?? 0) };
  }

  private async usedIn(db: DB, organizationId: string, meter: string, period: Period): Promise<number> {
    const counter = await db
      .selectFrom('usage_counter')
      .select('used')
      .where('organization_id', '=', organizationId)
      .where('meter', '=', meter)
      .where('period_start', '=', period.start)
      .executeTakeFirst();
    return Number(counter?.used ?? 0);
  }

  /** The soft limit crossed: once per organization, meter and period (the flag set under the counter's lock). */
  private async thresholdReached(trx: DB, row: OrgBillingRow, plan: CataloguePlan, meter: string, used: number, soft: number, period: Period): Promise<void> {
    const marked = await trx
      .updateTable('usage_counter')
      .set({ soft_notified: true })
      .where('organization_id', '=', row.id)
      .where('meter', '=', meter)
      .where('period_start', '=', period.start)
      .where('soft_notified', '=', false)
      .returning('used')
      .executeTakeFirst();
    if (!marked) return;
    const hard = plan.limits[meter]?.hard ?? null;
    const name = this.deps.catalogue().meters.find((m) => m.id === meter)?.name ?? meter;
    const org = await trx.selectFrom('organization').select('name').where('id', '=', row.id).executeTakeFirstOrThrow();
    await this.deps.notifications.notify(trx, {
      kind: 'usage-threshold',
      to: { organization: row.id, roles: ['owner', 'admin'] },
      title: phrase("{organization} reached its plan's warning level of {meter}", { organization: org.name, meter: name }),
      body:
        hard === null
          ? phrase('{used} {meter} used this billing period; the plan warns at {soft}.', { used, meter: name, soft })
          : phrase('{used} {meter} used this billing period; the plan warns at {soft} and stops at {hard}.', { used, meter: name, soft, hard }),
      url: `/orgs/${row.id}/usage`,
      email: (account) => ({
        kind: 'usage-threshold',
        to: account.email,
        data: { organization: org.name, organizationId: row.id, meter: name, used, soft, hard, periodEnd: period.end },
      }),
    });
    await emitWebhookEvent(trx, row.id, 'usage.threshold-reached', {
      usage: { meter, used, soft, hard, period: { start: period.start.toISOString(), end: period.end.toISOString() } },
    });
    this.deps.log.info('billing/usage-threshold', `An organization's usage of ${meter} reached the soft limit`, {
      'organization-id': row.id,
      meter,
      used,
      soft,
    });
  }

  private async limitReached(trx: DB, organizationId: string, meter: string, hard: number): Promise<void> {
    const name = this.deps.catalogue().meters.find((m) => m.id === meter)?.name ?? meter;
    const org = await trx.selectFrom('organization').select('name').where('id', '=', organizationId).executeTakeFirstOrThrow();
    await this.deps.notifications.notify(trx, {
      kind: 'usage-limit-reached',
      to: { organization: organizationId, roles: ['owner', 'admin'] },
      title: phrase("{organization} reached its plan's limit of {meter}", { organization: org.name, meter: name }),
      body: phrase('It used {hard} {meter} this billing period: what counts toward it is refused until the next period or an upgrade.', { hard, meter: name }),
      url: `/orgs/${organizationId}/usage`,
    });
  }

  /** A `meter` job for the organization, unless one not yet claimed waits (it takes every unsent record when it goes). */
  private queueMeterEvent(trx: DB, organizationId: string, meter: string): Promise<void> {
    return queueSyncJobOnce(trx, organizationId, { kind: 'meter', meter });
  }

  private readonly gauges = new Map<string, (organizationId: string) => Promise<number>>();

  /**
   * A meter that counts what an organization holds now rather than what a period added (the
   * files' `storage-bytes`): its `used` on the usage page is `read`'s, its hard limit checked by
   * its module ({@link hardLimitOf}).
   */
  useGauge(meter: string, read: (organizationId: string) => Promise<number>): void {
    this.gauges.set(meter, read);
  }

  /** The hard limit of `meter` on the organization's plan; null: none. */
  async hardLimitOf(db: DB, organizationId: string, meter: string): Promise<number | null> {
    const row = await orgBilling(db, organizationId);
    return row ? (planOf(this.deps.catalogue(), row)?.limits[meter]?.hard ?? null) : null;
  }

  /** GET /api/orgs/:id/usage: the plan, the period, seats and every meter of the catalogue with its daily usage. */
  async usageOf(organizationId: string, now = new Date()): Promise<OrganizationUsage | undefined> {
    const { db } = this.deps;
    const row = await orgBilling(db, organizationId);
    if (!row) return undefined;
    const catalogue = this.deps.catalogue();
    const plan = planOf(catalogue, row);
    const period = periodOf(row, now);
    const [{ rows: seatRows }, counters, daily] = await Promise.all([
      sql<{ n: string }>`
        select (select count(*) from membership where organization_id = ${organizationId} and suspended_at is null)
          + (select count(*) from invitation where organization_id = ${organizationId} and accepted_at is null and revoked_at is null and expires_at > now()) as n`.execute(
        db,
      ),
      db.selectFrom('usage_counter').select(['meter', 'used']).where('organization_id', '=', organizationId).where('period_start', '=', period.start).execute(),
      sql<{ meter: string; day: string; used: string }>`
        select meter, to_char(recorded_at at time zone 'UTC', 'YYYY-MM-DD') as day, sum(quantity)::text as used
        from usage_record
        where organization_id = ${organizationId} and recorded_at >= ${period.start} and recorded_at < ${period.end}
        group by meter, day`.execute(db),
    ]);
    const gauged = new Map(await Promise.all([...this.gauges].map(async ([meter, read]) => [meter, await read(organizationId)] as const)));
    const days: string[] = [];
    const last = dayOf(now < period.end ? now : new Date(period.end.getTime() - 1));
    for (
      let d = new Date(Date.UTC(period.start.getUTCFullYear(), period.start.getUTCMonth(), period.start.getUTCDate()));
      dayOf(d) <= last;
      d = new Date(d.getTime() + 86_400_000)
    ) {
      days.push(dayOf(d));
      if (days.length > 400) break;
    }
    return {
      plan: plan?.id ?? null,
      period: { start: period.start.toISOString(), end: period.end.toISOString() },
      seats: { used: Number(seatRows[0]?.n ?? 0), included: plan?.seats.included ?? 0, max: plan?.seats.max ?? null },
      meters: catalogue.meters.map((m) => {
        const byDay = new Map(daily.rows.filter((r) => r.meter === m.id).map((r) => [r.day, Number(r.used)]));
        return {
          meter: m.id,
          name: m.name,
          used: gauged.get(m.id) ?? Number(counters.find((c) => c.meter === m.id)?.used ?? 0),
          soft: plan?.limits[m.id]?.soft ?? null,
          hard: plan?.limits[m.id]?.hard ?? null,
          daily: days.map((date) => ({ date, used: byDay.get(date) ?? 0 })),
        };
      }),
    };
  }
}

export function usageLimit(meter: string, limit: number, used: number): HttpError {
  return new HttpError(402, {
    type: 'usage-limit',
    message: phrase("The organization reached its plan's limit of {limit} {meter} for this billing period", { limit, meter }),
    meter,
    limit,
    used,
  });
}
