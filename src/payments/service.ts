/**
 * Webhook intake: verify the raw bytes, parse the event, then store it once by its id and
 * apply its effect in the same transaction. A redelivery (or twenty concurrent ones) finds
 * the stored row (the primary key decides) and changes nothing.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import { badRequest, notFound, requestCoercion } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import type { WebhookOutcome } from '../observability/events.js';
import { InvalidEventError, InvalidSignatureError, type PaymentEffect, type PaymentEvent, type PaymentProvider } from './provider.js';

type Trx = Transaction<DatabaseSchema>;

/** PostgreSQL's bigint (the `seq` column) ends here; a larger number would fail the cast. */
const BIGINT_MAX = 9_223_372_036_854_775_807n;

/**
 * A `next-cursor` back to its position: 13 digits of milliseconds (up to the year 2286, well
 * inside both Date's and PostgreSQL's range) and the row's `seq`, which must fit a bigint. A
 * cursor that only looks right is refused here, not by PostgreSQL as a 500.
 */
function parseCursor(cursor: string): { createdAt: Date; seq: string } {
  const m = /^(\d{13})\.(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || BigInt(m[2]) > BIGINT_MAX) throw requestCoercion('body', [{ path: '/cursor', message: 'is not a cursor this service issued' }]);
  return { createdAt: new Date(Number(m[1])), seq: m[2] };
}

export interface ReceiveResult {
  received: true;
  duplicate: boolean;
}

export interface EventPage {
  events: Array<{ id: string; type: string; 'created-at': string }>;
  'next-cursor': string | null;
}

export interface PaymentServiceOptions {
  clock?: () => Date;
  /** told how each webhook delivery ended (metrics, src/observability/); `type` is `unknown` until verified */
  onWebhook?: (provider: string, type: string, outcome: WebhookOutcome) => void;
}

export class PaymentService {
  private readonly providers: Map<string, PaymentProvider>;
  private readonly clock: () => Date;
  private readonly onWebhook: PaymentServiceOptions['onWebhook'];

  constructor(private readonly db: DB, providers: PaymentProvider[], private readonly log: Logger, options: PaymentServiceOptions = {}) {
    this.providers = new Map(providers.map((p) => [p.name, p]));
    this.clock = options.clock ?? (() => new Date());
    this.onWebhook = options.onWebhook;
  }

  get providerNames(): string[] {
    return [...this.providers.keys()];
  }

  async receive(providerName: string, rawBody: Buffer, headers: IncomingHttpHeaders): Promise<ReceiveResult> {
    const provider = this.providers.get(providerName);
    if (!provider) throw notFound(`No payment provider "${providerName}"`, { known: this.providerNames });
    let event: PaymentEvent;
    try {
      provider.verify(rawBody, headers, this.clock());
      event = provider.parse(rawBody);
    } catch (err) {
      if (err instanceof InvalidSignatureError) {
        this.onWebhook?.(provider.name, 'unknown', 'invalid-signature');
        this.log.warn('payments/invalid-signature', `Refused a ${provider.name} webhook: ${err.message}`);
        throw badRequest({ type: 'invalid-signature', message: 'The webhook signature is missing, invalid or stale' });
      }
      if (err instanceof InvalidEventError) {
        this.onWebhook?.(provider.name, 'unknown', 'invalid-event');
        throw badRequest({ type: 'invalid-event', message: err.message });
      }
      throw err;
    }

    const duplicate = await this.db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('payment_event')
        .values({
          provider: provider.name, event_id: event.id, type: event.type, created_at: event.createdAt,
          customer_id: event.effect.customerId, payload: rawBody.toString('utf8'),
        })
        .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
        .returning('event_id')
        .executeTakeFirst();
      if (!inserted) return true;
      const accountId = await this.apply(trx, provider, event);
      if (accountId) {
        await trx.updateTable('payment_event').set({ account_id: accountId }).where('provider', '=', provider.name).where('event_id', '=', event.id).execute();
      }
      return false;
    });
    this.log.info(duplicate ? 'payments/duplicate-event' : 'payments/event', `${provider.name} ${event.type} ${event.id}${duplicate ? ' (already received)' : ''}`, {
      provider: provider.name, 'event-id': event.id, type: event.type,
    });
    this.onWebhook?.(provider.name, event.type, duplicate ? 'duplicate' : 'received');
    return { received: true, duplicate };
  }

  /** Applies an event's effect; returns the account it concerns, when known. */
  private async apply(trx: Trx, provider: PaymentProvider, event: PaymentEvent): Promise<string | null> {
    const effect = event.effect;
    switch (effect.kind) {
      case 'link-customer':
        return this.linkCustomer(trx, provider, effect.accountId, effect.customerId);
      case 'subscription': {
        // events can arrive out of order: never let an older one overwrite a newer state
        const newer = await trx.selectFrom('payment_event').select('event_id')
          .where('provider', '=', provider.name).where('customer_id', '=', effect.customerId)
          .where('type', 'like', 'customer.subscription.%').where('event_id', '!=', event.id)
          .where('created_at', '>', event.createdAt).limit(1).executeTakeFirst();
        if (newer) return this.accountOf(trx, effect.customerId);
        return this.setSubscription(trx, effect);
      }
      case 'payment-failed': {
        const row = await trx.updateTable('account').set({ subscription_status: 'past-due' })
          .where('payment_customer_id', '=', effect.customerId).returning('id').executeTakeFirst();
        return row?.id ?? null;
      }
      case 'none':
        return effect.customerId ? this.accountOf(trx, effect.customerId) : null;
    }
  }

  private async accountOf(trx: Trx, customerId: string): Promise<string | null> {
    const row = await trx.selectFrom('account').select('id').where('payment_customer_id', '=', customerId).executeTakeFirst();
    return row?.id ?? null;
  }

  private async setSubscription(trx: Trx, effect: Extract<PaymentEffect, { kind: 'subscription' }>): Promise<string | null> {
    const row = await trx.updateTable('account')
      .set({ subscription_status: effect.status, subscription_plan: effect.plan, subscription_period_end: effect.periodEnd })
      .where('payment_customer_id', '=', effect.customerId).returning('id').executeTakeFirst();
    return row?.id ?? null;
  }

  private async linkCustomer(trx: Trx, provider: PaymentProvider, accountId: string, customerId: string): Promise<string | null> {
    const owner = await this.accountOf(trx, customerId);
    if (owner && owner !== accountId) {
      this.log.warn('payments/customer-taken', 'The customer is already linked to another account; not relinked', { 'account-id': accountId });
      return owner;
    }
    const row = await trx.updateTable('account').set({ payment_customer_id: customerId }).where('id', '=', accountId).returning('id').executeTakeFirst();
    if (!row) {
      this.log.warn('payments/unknown-account', 'Checkout completed for an account that does not exist', { 'account-id': accountId });
      return null;
    }
    // subscription events that arrived before the checkout completion: adopt them, apply the newest
    await trx.updateTable('payment_event').set({ account_id: accountId })
      .where('provider', '=', provider.name).where('customer_id', '=', customerId).where('account_id', 'is', null).execute();
    const latest = await trx.selectFrom('payment_event').select(['payload'])
      .where('provider', '=', provider.name).where('customer_id', '=', customerId).where('type', 'like', 'customer.subscription.%')
      .orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
    if (latest) {
      const payload = typeof latest.payload === 'string' ? latest.payload : JSON.stringify(latest.payload);
      const effect = provider.parse(Buffer.from(payload)).effect;
      if (effect.kind === 'subscription') await this.setSubscription(trx, effect);
    }
    return accountId;
  }

  /** The account's payment events, newest first, in pages. */
  async listEvents(accountId: string, limit: number, cursor: string | undefined): Promise<EventPage> {
    let after: { createdAt: Date; seq: string } | undefined;
    if (cursor) {
      after = parseCursor(cursor);
    }
    let query = this.db.selectFrom('payment_event').select(['event_id', 'type', 'created_at', 'seq'])
      .where('account_id', '=', accountId);
    if (after) {
      const { createdAt, seq } = after;
      query = query.where((eb) => eb.or([
        eb('created_at', '<', createdAt),
        eb.and([eb('created_at', '=', createdAt), eb('seq', '<', sql<string>`${seq}::bigint`)]),
      ]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map((r) => ({ id: r.event_id, type: r.type, 'created-at': new Date(r.created_at).toISOString() })),
      'next-cursor': rows.length > limit && last
        ? Buffer.from(`${new Date(last.created_at).getTime().toString().padStart(13, '0')}.${last.seq}`).toString('base64url')
        : null,
    };
  }
}
