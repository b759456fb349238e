/**
 * Webhook intake: verify the raw bytes, parse the event, then store it once by its id and
 * apply its effect to the organization it concerns in the same transaction (effects.ts). A
 * redelivery (or twenty concurrent ones) finds the stored row (the primary key decides) and
 * changes nothing.
 */
import { phrase } from '../i18n/messages.js';
import type { IncomingHttpHeaders } from 'node:http';
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import { badRequest, notFound, requestCoercion } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import type { WebhookOutcome } from '../observability/events.js';
import type { BillingEffects } from './effects.js';
import { InvalidEventError, InvalidSignatureError, type PaymentEffect, type PaymentEvent, type PaymentProvider } from './provider.js';

/** The subscription an event concerns, stored with it so out-of-order events are judged per subscription. */
const subscriptionOf = (effect: PaymentEffect): string | null =>
  effect.kind === 'subscription' || effect.kind === 'invoice' || effect.kind === 'checkout-completed' ? effect.subscriptionId : null;

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

  constructor(
    private readonly db: DB,
    providers: PaymentProvider[],
    private readonly effects: BillingEffects,
    private readonly log: Logger,
    options: PaymentServiceOptions = {},
  ) {
    this.providers = new Map(providers.map((p) => [p.name, p]));
    this.clock = options.clock ?? (() => new Date());
    this.onWebhook = options.onWebhook;
  }

  get providerNames(): string[] {
    return [...this.providers.keys()];
  }

  async receive(providerName: string, rawBody: Buffer, headers: IncomingHttpHeaders): Promise<ReceiveResult> {
    const provider = this.providers.get(providerName);
    if (!provider) throw notFound(phrase('No payment provider "{provider}"', { provider: providerName }), { known: this.providerNames });
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
        throw badRequest({ type: 'invalid-event', message: err.words });
      }
      throw err;
    }

    const duplicate = await this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('payment_event')
        .values({
          provider: provider.name,
          event_id: event.id,
          type: event.type,
          created_at: event.createdAt,
          customer_id: event.effect.customerId,
          subscription_id: subscriptionOf(event.effect),
          final: event.effect.kind === 'subscription' && event.effect.final,
          payload: rawBody.toString('utf8'),
        })
        .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
        .returning('event_id')
        .executeTakeFirst();
      if (!inserted) return true;
      const target = await this.effects.apply(trx, provider, event);
      if (target) {
        await trx
          .updateTable('payment_event')
          .set({ organization_id: target.organizationId, account_id: target.accountId })
          .where('provider', '=', provider.name)
          .where('event_id', '=', event.id)
          .execute();
      }
      return false;
    });
    this.log.info(
      duplicate ? 'payments/duplicate-event' : 'payments/event',
      `${provider.name} ${event.type} ${event.id}${duplicate ? ' (already received)' : ''}`,
      {
        provider: provider.name,
        'event-id': event.id,
        type: event.type,
      },
    );
    this.onWebhook?.(provider.name, event.type, duplicate ? 'duplicate' : 'received');
    return { received: true, duplicate };
  }

  /** Applies what the provider says of a subscription now (a re-read after tied events), in its own transaction. */
  async applyCurrent(provider: PaymentProvider, event: PaymentEvent): Promise<void> {
    await this.db.transaction().execute((trx) => this.effects.applyCurrent(trx, provider, event));
    this.log.info('payments/subscription-retrieved', `${provider.name} subscription applied as the provider has it now`, {
      provider: provider.name,
      'event-id': event.id,
    });
  }

  /** The account's payment events, newest first, in pages. */
  async listEvents(accountId: string, limit: number, cursor: string | undefined): Promise<EventPage> {
    let after: { createdAt: Date; seq: string } | undefined;
    if (cursor) {
      after = parseCursor(cursor);
    }
    let query = this.db.selectFrom('payment_event').select(['event_id', 'type', 'created_at', 'seq']).where('account_id', '=', accountId);
    if (after) {
      const { createdAt, seq } = after;
      query = query.where((eb) =>
        eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('seq', '<', sql<string>`${seq}::bigint`)])]),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map((r) => ({ id: r.event_id, type: r.type, 'created-at': new Date(r.created_at).toISOString() })),
      'next-cursor':
        rows.length > limit && last
          ? Buffer.from(`${new Date(last.created_at).getTime().toString().padStart(13, '0')}.${last.seq}`).toString('base64url')
          : null,
    };
  }
}
