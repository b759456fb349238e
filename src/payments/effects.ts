/**
 * What a verified payment event does to an organization's billing, inside the transaction that
 * stores the event (src/payments/service.ts). The rules (docs/billing.md, "What the webhook does"):
 * - `checkout-completed` names the organization (`client_reference_id`: its id, or an account id
 *   naming the personal one) and stores the customer and subscription on it; events of that
 *   customer that arrived before are adopted and applied in order;
 * - subscription and invoice events find their organization through the stored subscription id,
 *   else the stored customer id; an event no organization claims is kept for adoption;
 * - an event older than one already stored for the same subscription (or customer) does not
 *   overwrite the newer state (Stripe does not promise order);
 * - `canceled` and `incomplete_expired` are final for a subscription id: once an event says so, no
 *   other event of that id moves it out, whatever its time; a final event applies whatever its
 *   order (a new subscription id is a new subscription, and still activates);
 * - events of one subscription that share a `created` second (one action's events do) are settled
 *   by what Stripe says now: the event applies, and a re-read of the subscription is queued on the
 *   Stripe sync (an outside call is a job), which applies what Stripe has (`applyCurrent`);
 * - concurrent events of one customer are applied one after the other (a transaction-scoped
 *   advisory lock on the customer): a subscription event racing its checkout's completion is
 *   either seen by the completion (and adopted) or sees the organization it linked; events of one
 *   organization also lock its row;
 * - each change of status, plan or cancel-at-period-end appends `billing.subscription-changed` to
 *   the audit log, and the trial's end is announced to the owners by email, in the same transaction
 *   (subscription-change.ts writes them).
 */
import { sql, type Transaction } from 'kysely';
import type { DatabaseSchema, SubscriptionStatus } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import type { PaymentEffect, PaymentEvent, PaymentProvider } from './provider.js';
import { auditBilling, BILLING_COLUMNS, type BillingRow, sendTrialEndingNotice, writeSubscriptionChange } from './subscription-change.js';
import { msg, phrase } from '../i18n/messages.js';

type Trx = Transaction<DatabaseSchema>;
type SubscriptionEffect = Extract<PaymentEffect, { kind: 'subscription' }>;
type InvoiceEffect = Extract<PaymentEffect, { kind: 'invoice' }>;
type CheckoutEffect = Extract<PaymentEffect, { kind: 'checkout-completed' }>;

/** The organization an event concerns, for the event's row. */
export interface EventTarget {
  organizationId: string;
  /** the personal organization's account: the event then shows in that account's export */
  accountId: string | null;
}

/** A subscription in one of these is running: another subscription's end or start does not replace it. */
const LIVE: ReadonlySet<SubscriptionStatus> = new Set(['trialing', 'active', 'past-due']);
const SUBSCRIPTION_EVENTS = 'customer.subscription.%';
const INVOICE_EVENTS = ['invoice.paid', 'invoice.payment_failed'];
/** at most this many earlier events of a customer are applied when its checkout completes */
const ADOPT_LIMIT = 100;

const targetOf = (org: Pick<BillingRow, 'id' | 'personal_account_id'>): EventTarget => ({ organizationId: org.id, accountId: org.personal_account_id });

export interface BillingEffectsDeps {
  notifications: Pick<NotificationService, 'notify'>;
  log: Logger;
  /** a price id's plan name (BILLING_PLANS); null keeps the price id itself as the plan */
  planOf(priceId: string): string | null;
  /** queues, in the event's transaction, a re-read of the subscription from the provider (its events tied) */
  queueSubscriptionRead(trx: Trx, organizationId: string, subscriptionId: string): Promise<void>;
}

export class BillingEffects {
  constructor(private readonly deps: BillingEffectsDeps) {}

  /** Applies a just-stored event; returns the organization it concerns, when one does. */
  async apply(trx: Trx, provider: PaymentProvider, event: PaymentEvent): Promise<EventTarget | null> {
    const effect = event.effect;
    // taken again by a replay in the same transaction: a session may hold an advisory lock several times
    if (effect.customerId) await sql`select pg_advisory_xact_lock(hashtextextended(${`${provider.name}:${effect.customerId}`}, 0))`.execute(trx);
    switch (effect.kind) {
      case 'checkout-completed':
        return this.checkoutCompleted(trx, provider, event, effect);
      case 'subscription':
        return this.subscription(trx, provider, event, effect);
      case 'invoice':
        return this.invoice(trx, provider, event, effect);
      case 'none': {
        if (!effect.customerId) return null;
        const org = await trx
          .selectFrom('organization')
          .select(['id', 'personal_account_id'])
          .where('billing_customer_id', '=', effect.customerId)
          .executeTakeFirst();
        return org ? targetOf(org) : null;
      }
    }
  }

  /** The organization of a subscription or invoice event, locked: by the stored subscription, else the customer. */
  private async organizationOf(trx: Trx, subscriptionId: string | null, customerId: string): Promise<BillingRow | undefined> {
    if (subscriptionId) {
      const bySubscription = await trx
        .selectFrom('organization')
        .select(BILLING_COLUMNS)
        .where('billing_subscription_id', '=', subscriptionId)
        .orderBy('id')
        .limit(1)
        .forUpdate()
        .executeTakeFirst();
      if (bySubscription) return bySubscription;
    }
    return trx.selectFrom('organization').select(BILLING_COLUMNS).where('billing_customer_id', '=', customerId).forUpdate().executeTakeFirst();
  }

  /** true when an event of `types` about the same subscription (else customer) is newer than this one */
  private async superseded(
    trx: Trx,
    provider: PaymentProvider,
    event: PaymentEvent,
    effect: SubscriptionEffect | InvoiceEffect,
    types: 'subscription' | 'any',
  ): Promise<boolean> {
    let query = trx
      .selectFrom('payment_event')
      .select('event_id')
      .where('provider', '=', provider.name)
      .where('event_id', '!=', event.id)
      .where('created_at', '>', event.createdAt);
    query = effect.subscriptionId ? query.where('subscription_id', '=', effect.subscriptionId) : query.where('customer_id', '=', effect.customerId);
    query =
      types === 'subscription'
        ? query.where('type', 'like', SUBSCRIPTION_EVENTS)
        : query.where((eb) => eb.or([eb('type', 'like', SUBSCRIPTION_EVENTS), eb('type', 'in', INVOICE_EVENTS)]));
    return Boolean(await query.limit(1).executeTakeFirst());
  }

  private async checkoutCompleted(trx: Trx, provider: PaymentProvider, event: PaymentEvent, effect: CheckoutEffect): Promise<EventTarget | null> {
    // an organization id, or an account id naming its personal organization (checkouts made before billing moved)
    const org = await trx
      .selectFrom('organization')
      .select(BILLING_COLUMNS)
      .where((eb) => eb.or([eb('id', '=', effect.reference), eb('personal_account_id', '=', effect.reference)]))
      .orderBy((eb) => eb('id', '=', effect.reference), 'desc')
      .limit(1)
      .forUpdate()
      .executeTakeFirst();
    if (!org) {
      this.deps.log.warn('payments/unknown-organization', 'Checkout completed for an organization that does not exist', { reference: effect.reference });
      return null;
    }
    const holder = await trx
      .selectFrom('organization')
      .select(['id', 'personal_account_id'])
      .where('billing_customer_id', '=', effect.customerId)
      .executeTakeFirst();
    if (holder && holder.id !== org.id) {
      this.deps.log.warn('payments/customer-taken', 'The customer pays for another organization already; not moved', { 'organization-id': org.id });
      return targetOf(holder);
    }
    await trx
      .updateTable('organization')
      .set({ billing_customer_id: effect.customerId, billing_subscription_id: effect.subscriptionId ?? org.billing_subscription_id })
      .where('id', '=', org.id)
      .execute();
    await auditBilling(trx, org, 'billing.checkout-completed', {
      'customer-id': effect.customerId,
      'subscription-id': effect.subscriptionId,
      'event-id': event.id,
    });
    // events of this customer that came before the checkout's completion: theirs now, applied in their order
    const adopted = await trx
      .updateTable('payment_event')
      .set({ organization_id: org.id, account_id: org.personal_account_id })
      .where('provider', '=', provider.name)
      .where('customer_id', '=', effect.customerId)
      .where('organization_id', 'is', null)
      .where('event_id', '!=', event.id)
      .returning(['event_id', 'type', 'created_at', 'seq', 'payload'])
      .execute();
    const toApply = adopted
      .filter((e) => e.type.startsWith('customer.subscription.') || INVOICE_EVENTS.includes(e.type))
      .sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || Number(BigInt(a.seq) - BigInt(b.seq)))
      .slice(-ADOPT_LIMIT);
    for (const row of toApply) {
      const payload = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
      await this.apply(trx, provider, provider.parse(Buffer.from(payload)));
    }
    return targetOf(org);
  }

  /**
   * Applies a subscription as the provider has it now (a re-read after tied events): newer than
   * every stored event, so no order check, but a subscription that ended stays ended.
   */
  async applyCurrent(trx: Trx, provider: PaymentProvider, event: PaymentEvent): Promise<EventTarget | null> {
    if (event.effect.kind !== 'subscription') return null;
    await sql`select pg_advisory_xact_lock(hashtextextended(${`${provider.name}:${event.effect.customerId}`}, 0))`.execute(trx);
    return this.subscription(trx, provider, event, event.effect, true);
  }

  /**
   * Whether another stored event of the subscription is of `kind`: `final` (it ended the
   * subscription for good) or `tied` (a subscription event of this event's `created` second).
   */
  private async another(trx: Trx, provider: PaymentProvider, event: PaymentEvent, subscriptionId: string, kind: 'final' | 'tied'): Promise<boolean> {
    let query = trx
      .selectFrom('payment_event')
      .select('event_id')
      .where('provider', '=', provider.name)
      .where('subscription_id', '=', subscriptionId)
      .where('event_id', '!=', event.id);
    query = kind === 'final' ? query.where('final', '=', true) : query.where('type', 'like', SUBSCRIPTION_EVENTS).where('created_at', '=', event.createdAt);
    return Boolean(await query.limit(1).executeTakeFirst());
  }

  private async subscription(
    trx: Trx,
    provider: PaymentProvider,
    event: PaymentEvent,
    effect: SubscriptionEffect,
    current = false,
  ): Promise<EventTarget | null> {
    const org = await this.organizationOf(trx, effect.subscriptionId, effect.customerId);
    if (!org) return null;
    const sub = effect.subscriptionId;
    if (sub && !effect.final && (await this.another(trx, provider, event, sub, 'final'))) {
      // canceled is final for a subscription id: a same-second (or any later) event cannot revive it
      this.deps.log.info('payments/subscription-ended', 'An event of a subscription that ended changes nothing', {
        'organization-id': org.id,
        'event-id': event.id,
      });
      return targetOf(org);
    }
    // a final event applies whatever its order; others yield to a newer stored event
    if (!current && !effect.final && (await this.superseded(trx, provider, event, effect, 'subscription'))) return targetOf(org);
    const other = Boolean(org.billing_subscription_id && sub && org.billing_subscription_id !== sub);
    // another subscription of the customer replaces a running one only when it runs itself (an old one ending changes nothing)
    if (other && LIVE.has(org.subscription_status) && !LIVE.has(effect.status)) return targetOf(org);
    // a newer invoice event decided the status; the subscription's other facts still apply
    const status = !current && !effect.final && (await this.superseded(trx, provider, event, effect, 'any')) ? org.subscription_status : effect.status;
    // one action's events share a second and come in any order: what Stripe has now settles it
    if (!current && !effect.final && sub && (await this.another(trx, provider, event, sub, 'tied'))) await this.deps.queueSubscriptionRead(trx, org.id, sub);
    await writeSubscriptionChange(trx, this.deps.log, org, event, {
      status,
      plan: effect.priceId ? (this.deps.planOf(effect.priceId) ?? effect.priceId) : null,
      periodEnd: effect.periodEnd,
      cancelAtPeriodEnd: effect.cancelAtPeriodEnd,
      subscriptionId: effect.subscriptionId ?? org.billing_subscription_id,
      periodStart: effect.periodStart ?? null,
      items: effect.items ?? [],
    });
    if (effect.trialEnding && status === 'trialing') {
      await sendTrialEndingNotice(trx, this.deps.notifications, org, effect.trialEnding.endsAt, effect.priceId ? this.deps.planOf(effect.priceId) : null);
    }
    return targetOf(org);
  }

  /**
   * `invoice.paid` makes the subscription `active` (a retried payment succeeded); a zero amount
   * (a trial's first invoice) and an invoice with no subscription (a one-off charge) change
   * nothing. `invoice.payment_failed` makes it `past-due`. A canceled subscription stays canceled.
   */
  private async invoice(trx: Trx, provider: PaymentProvider, event: PaymentEvent, effect: InvoiceEffect): Promise<EventTarget | null> {
    const org = await this.organizationOf(trx, effect.subscriptionId, effect.customerId);
    if (!org) return null;
    if (await this.superseded(trx, provider, event, effect, 'any')) return targetOf(org);
    if (org.billing_subscription_id && effect.subscriptionId && org.billing_subscription_id !== effect.subscriptionId) return targetOf(org);
    if (org.subscription_status === 'canceled') return targetOf(org);
    if (effect.outcome === 'paid' && (effect.amountPaid <= 0 || !effect.subscriptionId)) return targetOf(org);
    if (effect.outcome !== 'paid' && org.subscription_status !== 'past-due')
      await this.deps.notifications.notify(trx, {
        kind: 'payment-failed',
        to: { organization: org.id, roles: ['owner', 'admin'] },
        title: phrase('A payment of {organization} failed', { organization: org.name }),
        body: msg('The subscription is past due: update the payment method on the Billing page before Stripe gives up retrying.'),
        url: `/orgs/${org.id}/billing`,
      });
    await writeSubscriptionChange(trx, this.deps.log, org, event, {
      status: effect.outcome === 'paid' ? 'active' : 'past-due',
      plan: org.subscription_plan,
      periodEnd: org.subscription_period_end,
      cancelAtPeriodEnd: org.subscription_cancel_at_period_end,
      subscriptionId: org.billing_subscription_id ?? effect.subscriptionId,
    });
    return targetOf(org);
  }
}
