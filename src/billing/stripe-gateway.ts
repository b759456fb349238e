/**
 * The Stripe calls billing makes (the plans' prices, a Checkout Session, a Customer Portal
 * session, canceling the subscription of an organization that is deleted), through
 * the official `stripe` client pointed at STRIPE_API_URL, each in a `withSpan` client span.
 * The client is loaded only when STRIPE_SECRET_KEY is set (it takes a noticeable part of a
 * second to import). Stripe's errors become {@link StripeGatewayError}s that carry what is safe
 * to show: never the key, never Stripe's own message (an authentication error quotes part of it).
 */
import type Stripe from 'stripe';
import { withSpan } from '../observability/spans.js';
import type { BillingSettings } from './settings.js';

export type CheckoutSessionParams = Stripe.Checkout.SessionCreateParams;
export type PortalSessionParams = Stripe.BillingPortal.SessionCreateParams;

/** What the pricing shows of a Stripe price. */
export interface PriceDetails {
  id: string;
  /** the product's name (the price's nickname when the product has none) */
  name: string | undefined;
  /** in the currency's smallest unit; undefined for prices without a fixed amount (tiers, metered) */
  amount: number | undefined;
  currency: string;
  interval: 'day' | 'week' | 'month' | 'year' | undefined;
  intervalCount: number | undefined;
}

const INTERVALS = ['day', 'week', 'month', 'year'] as const;

export interface BillingGateway {
  /** a price with its product's name (Prices API, `expand: ['product']`) */
  retrievePrice(priceId: string): Promise<PriceDetails>;
  /** a hosted Checkout Session; the same `idempotencyKey` with the same params answers the same session */
  createCheckoutSession(params: CheckoutSessionParams, idempotencyKey: string): Promise<{ id: string; url: string }>;
  createPortalSession(params: PortalSessionParams): Promise<{ id: string; url: string }>;
  /** cancels at once (no further charge); a subscription Stripe no longer has counts as canceled */
  cancelSubscription(subscriptionId: string): Promise<void>;
  /** a subscription as Stripe has it now (its JSON object); undefined when Stripe has none by this id */
  retrieveSubscription(subscriptionId: string): Promise<Record<string, unknown> | undefined>;
  /** sets a subscription item's quantity (the seat sync) */
  setItemQuantity(itemId: string, quantity: number, proration: 'create_prorations' | 'always_invoice' | 'none', idempotencyKey: string): Promise<void>;
  /**
   * sends a Billing Meter event: `duplicate` when Stripe refuses it because it has an event with
   * this identifier (the caller decides whether that event was its own)
   */
  sendMeterEvent(event: { eventName: string; customerId: string; value: number; identifier: string; timestamp: Date }): Promise<'sent' | 'duplicate'>;
}

/** Why a Stripe call failed, in words safe for a response and a log line. */
export type StripeFailure = 'authentication' | 'permission' | 'connection' | 'rate-limit' | 'invalid-request' | 'idempotency' | 'api' | 'no-url';

export class StripeGatewayError extends Error {
  constructor(
    readonly failure: StripeFailure,
    /** Stripe's error code (`resource_missing`, ...) and the parameter it names, when it gives them */
    readonly code: string | undefined,
    readonly param: string | undefined,
    /** Stripe's request id (`req_…`), for support */
    readonly requestId: string | undefined,
    readonly httpStatus: number | undefined,
  ) {
    super(`Stripe call failed: ${failure}${code ? ` (${code})` : ''}`);
    this.name = 'StripeGatewayError';
  }
}

const FAILURES: Record<string, StripeFailure> = {
  StripeAuthenticationError: 'authentication',
  StripePermissionError: 'permission',
  StripeConnectionError: 'connection',
  StripeRateLimitError: 'rate-limit',
  RateLimitError: 'rate-limit',
  StripeInvalidRequestError: 'invalid-request',
  StripeIdempotencyError: 'idempotency',
};

/** Keeps the fields of a Stripe error that name no secret; anything else thrown stays as it is. */
function gatewayError(err: unknown): unknown {
  const e = err as { type?: string; rawType?: string; code?: string; param?: string; requestId?: string; statusCode?: number };
  if (!e || typeof e.type !== 'string' || (!e.type.startsWith('Stripe') && !(e.type in FAILURES))) return err;
  const safe = (v: unknown) => (typeof v === 'string' && /^[A-Za-z0-9_.[\]-]{1,100}$/.test(v) ? v : undefined);
  return new StripeGatewayError(
    FAILURES[e.type] ?? 'api',
    safe(e.code),
    safe(e.param),
    safe(e.requestId),
    typeof e.statusCode === 'number' ? e.statusCode : undefined,
  );
}

/** The official client configured for STRIPE_API_URL; undefined without STRIPE_SECRET_KEY. */
export async function stripeGateway(settings: BillingSettings): Promise<BillingGateway | undefined> {
  if (!settings.secretKey) return undefined;
  const { default: StripeClient } = await import('stripe');
  const url = settings.apiUrl;
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const port = url.port ? Number(url.port) : protocol === 'http' ? 80 : 443;
  const stripe = new StripeClient(settings.secretKey, {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    protocol,
    // network failures are retried with the same idempotency key, so a retry never makes a second session
    maxNetworkRetries: 2,
    timeout: 15_000,
    telemetry: false,
    appInfo: { name: 'saas-starter' },
  });
  const attributes = { 'server.address': url.hostname, 'server.port': port };
  const call = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await withSpan(`stripe ${name}`, attributes, fn);
    } catch (err) {
      throw gatewayError(err);
    }
  };
  return {
    async retrievePrice(priceId) {
      const price = await call('prices.retrieve', () => stripe.prices.retrieve(priceId, { expand: ['product'] }));
      const product =
        typeof price.product === 'object' && price.product !== null && !('deleted' in price.product && price.product.deleted)
          ? (price.product as Stripe.Product)
          : undefined;
      return {
        id: price.id,
        name: product?.name ?? price.nickname ?? undefined,
        amount: price.unit_amount ?? undefined,
        currency: price.currency,
        // Stripe types leave room for intervals it may add; only the four it has are shown
        interval: INTERVALS.find((i) => i === price.recurring?.interval),
        intervalCount: price.recurring?.interval_count,
      };
    },
    async createCheckoutSession(params, idempotencyKey) {
      const session = await call('checkout.sessions.create', () => stripe.checkout.sessions.create(params, { idempotencyKey }));
      if (!session.url) throw new StripeGatewayError('no-url', undefined, undefined, session.lastResponse?.requestId, undefined);
      return { id: session.id, url: session.url };
    },
    async createPortalSession(params) {
      const session = await call('billing_portal.sessions.create', () => stripe.billingPortal.sessions.create(params));
      return { id: session.id, url: session.url };
    },
    async setItemQuantity(itemId, quantity, proration, idempotencyKey) {
      await call('subscription_items.update', () => stripe.subscriptionItems.update(itemId, { quantity, proration_behavior: proration }, { idempotencyKey }));
    },
    async sendMeterEvent(event) {
      try {
        await call('billing.meter_events.create', () =>
          stripe.billing.meterEvents.create(
            {
              event_name: event.eventName,
              payload: { stripe_customer_id: event.customerId, value: String(event.value) },
              identifier: event.identifier,
              timestamp: Math.floor(event.timestamp.getTime() / 1000),
            },
            // the identifier is Stripe's own de-duplication; the same key keeps a network retry to one request
            { idempotencyKey: event.identifier },
          ),
        );
        return 'sent';
      } catch (err) {
        // Stripe has an event with this identifier: a re-send after a lost answer, if the identifier is ours
        if (err instanceof StripeGatewayError && err.failure === 'invalid-request' && /duplicate/i.test(err.code ?? '')) return 'duplicate';
        throw err;
      }
    },
    async retrieveSubscription(subscriptionId) {
      try {
        const subscription = await call('subscriptions.retrieve', () => stripe.subscriptions.retrieve(subscriptionId));
        // the webhook's mapping reads Stripe's JSON shape; the client's object is that plus `lastResponse`
        const { lastResponse: _response, ...object } = subscription;
        return object as unknown as Record<string, unknown>;
      } catch (err) {
        if (err instanceof StripeGatewayError && err.code === 'resource_missing') return undefined;
        throw err;
      }
    },
    async cancelSubscription(subscriptionId) {
      try {
        await call('subscriptions.cancel', () => stripe.subscriptions.cancel(subscriptionId));
      } catch (err) {
        if (err instanceof StripeGatewayError && err.code === 'resource_missing') return;
        throw err;
      }
    },
  };
}
