/**
 * Stripe: the `Stripe-Signature` scheme (`t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
 * several v1 and several secrets for rotation, 300 s tolerance either way, constant-time
 * comparison) and the mapping of the events this service acts on (docs/billing.md lists them).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SubscriptionStatus } from '../db/schema.js';
import { msg, phrase } from '../i18n/messages.js';
import { InvalidEventError, InvalidSignatureError, type PaymentEffect, type PaymentEvent, type PaymentProvider } from './provider.js';

export const STRIPE_TOLERANCE_SECONDS = 300;

export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

export function parseSignatureHeader(header: string | string[] | undefined): ParsedSignatureHeader {
  if (typeof header !== 'string' || header.length === 0 || header.length > 4096) throw new InvalidSignatureError('Missing Stripe-Signature header');
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  if (timestamp === undefined) throw new InvalidSignatureError('Stripe-Signature has no valid timestamp');
  if (signatures.length === 0) throw new InvalidSignatureError('Stripe-Signature has no v1 signature');
  return { timestamp, signatures };
}

/** Verifies a Stripe webhook signature; throws {@link InvalidSignatureError}. */
export function verifyStripeSignature(
  rawBody: Buffer,
  header: string | string[] | undefined,
  secrets: readonly string[],
  now: Date,
  tolerance = STRIPE_TOLERANCE_SECONDS,
): void {
  if (secrets.length === 0) throw new InvalidSignatureError('No webhook secret is configured (STRIPE_WEBHOOK_SECRET)');
  const { timestamp, signatures } = parseSignatureHeader(header);
  if (Math.abs(now.getTime() / 1000 - timestamp) > tolerance) throw new InvalidSignatureError('Stripe-Signature timestamp is outside the tolerance');
  const given = signatures.map((s) => Buffer.from(s, 'hex'));
  let match = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
    // compare against every candidate without stopping early
    for (const sig of given) if (sig.length === expected.length && timingSafeEqual(sig, expected)) match = true;
  }
  if (!match) throw new InvalidSignatureError('No Stripe-Signature matches the body');
}

const STATUS: Record<string, SubscriptionStatus> = {
  trialing: 'trialing',
  active: 'active',
  past_due: 'past-due',
  unpaid: 'past-due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
  paused: 'canceled',
  incomplete: 'none',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const idOf = (v: unknown): string | null => str(v) ?? (isObj(v) ? str(v.id) : null);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The latest Unix time (seconds) an event may carry: 9999-12-31T23:59:59Z. Later ones are no real
 * Stripe time, and PostgreSQL refuses to store years past 294276 (a 500 that Stripe would retry
 * for days); an event carrying one is invalid (400), so Stripe stops.
 */
export const LATEST_UNIX_TIME = 253_402_300_799;

/** A Stripe timestamp (whole seconds since 1970, up to {@link LATEST_UNIX_TIME}) as a Date. */
function unixTime(value: unknown, field: string): Date {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > LATEST_UNIX_TIME) {
    throw new InvalidEventError(phrase("The event's {field} is not a Unix time between 1970 and 9999", { field }));
  }
  return new Date(value * 1000);
}

function firstItem(sub: Obj): Obj | undefined {
  const items = isObj(sub.items) && Array.isArray(sub.items.data) ? sub.items.data : [];
  return isObj(items[0]) ? items[0] : undefined;
}

/** Every item of a subscription with an id and a price. */
function itemsOf(sub: Obj): Array<{ id: string; price: string; quantity: number | null }> {
  const items = isObj(sub.items) && Array.isArray(sub.items.data) ? sub.items.data : [];
  return items.filter(isObj).flatMap((item) => {
    const id = str(item.id);
    const price = (isObj(item.price) ? str(item.price.id) : null) ?? (isObj(item.plan) ? str(item.plan.id) : null);
    const quantity = typeof item.quantity === 'number' && Number.isSafeInteger(item.quantity) ? item.quantity : null;
    return id && price ? [{ id, price, quantity }] : [];
  });
}

/** An invoice's subscription: `subscription` before API version 2025-03-31, `parent.subscription_details.subscription` since. */
function invoiceSubscription(invoice: Obj): string | null {
  const parent = isObj(invoice.parent) && isObj(invoice.parent.subscription_details) ? invoice.parent.subscription_details : undefined;
  return idOf(invoice.subscription) ?? (parent ? idOf(parent.subscription) : null);
}

/** The effect of a Stripe event (the `data.object` shapes of Stripe's API). */
export function stripeEffect(type: string, object: Obj): PaymentEffect {
  const customerId = idOf(object.customer);
  if (type === 'checkout.session.completed') {
    const reference = str(object.client_reference_id);
    if (customerId && reference && UUID.test(reference)) {
      return { kind: 'checkout-completed', reference: reference.toLowerCase(), customerId, subscriptionId: idOf(object.subscription) };
    }
    return { kind: 'none', customerId };
  }
  // every customer.subscription.* event carries the whole subscription as it is now
  if (type.startsWith('customer.subscription.') && customerId && object.object !== 'subscription_schedule') {
    const item = firstItem(object);
    const priceId =
      (item && isObj(item.price) ? str(item.price.id) : null) ??
      (item && isObj(item.plan) ? str(item.plan.id) : null) ??
      (isObj(object.plan) ? str(object.plan.id) : null);
    // newer API versions moved the period to the items
    const end =
      typeof object.current_period_end === 'number' ? object.current_period_end : typeof item?.current_period_end === 'number' ? item.current_period_end : null;
    const start =
      typeof object.current_period_start === 'number'
        ? object.current_period_start
        : typeof item?.current_period_start === 'number'
          ? item.current_period_start
          : null;
    const deleted = type === 'customer.subscription.deleted';
    const status = deleted ? 'canceled' : (STATUS[String(object.status)] ?? 'none');
    const trialEnd = typeof object.trial_end === 'number' ? unixTime(object.trial_end, 'trial_end') : null;
    return {
      kind: 'subscription',
      customerId,
      subscriptionId: str(object.id),
      status,
      priceId,
      periodEnd: end === null ? null : unixTime(end, 'current_period_end'),
      periodStart: start === null ? null : unixTime(start, 'current_period_start'),
      items: itemsOf(object),
      // the portal cancels at the period's end (`cancel_at_period_end`, or `cancel_at` in newer versions)
      cancelAtPeriodEnd: !deleted && status !== 'canceled' && (object.cancel_at_period_end === true || typeof object.cancel_at === 'number'),
      // `paused` maps to canceled too, but a paused subscription resumes: it is not final
      final: deleted || object.status === 'canceled' || object.status === 'incomplete_expired',
      trialEnding: type === 'customer.subscription.trial_will_end' && trialEnd ? { endsAt: trialEnd } : null,
    };
  }
  if ((type === 'invoice.paid' || type === 'invoice.payment_failed') && customerId) {
    const amountPaid = typeof object.amount_paid === 'number' && Number.isFinite(object.amount_paid) ? object.amount_paid : 0;
    return {
      kind: 'invoice',
      customerId,
      subscriptionId: invoiceSubscription(object),
      outcome: type === 'invoice.paid' ? 'paid' : 'payment-failed',
      amountPaid,
    };
  }
  return { kind: 'none', customerId };
}

/** A subscription retrieved from Stripe now, as an event the effects apply (`applyCurrent`). */
export function currentSubscriptionEvent(subscription: Obj, now: Date): PaymentEvent {
  return {
    id: `retrieved:${String(subscription.id)}`,
    type: 'subscription.retrieved',
    createdAt: now,
    effect: stripeEffect('customer.subscription.updated', subscription),
  };
}

export function stripeProvider(secrets: readonly string[]): PaymentProvider {
  return {
    name: 'stripe',
    verify(rawBody: Buffer, headers: IncomingHttpHeaders, now: Date) {
      verifyStripeSignature(rawBody, headers['stripe-signature'], secrets, now);
    },
    parse(rawBody: Buffer): PaymentEvent {
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new InvalidEventError(msg('The body is not JSON'));
      }
      if (!isObj(json) || !str(json.id) || !str(json.type)) throw new InvalidEventError(msg('The body is not an event: it needs an id and a type'));
      const id = String(json.id);
      const type = String(json.type);
      if (id.length > 255 || type.length > 255) throw new InvalidEventError(msg('Event id or type is too long'));
      const object = isObj(json.data) && isObj(json.data.object) ? json.data.object : {};
      const created = typeof json.created === 'number' ? unixTime(json.created, 'created') : new Date();
      return { id, type, createdAt: created, effect: stripeEffect(type, object) };
    },
  };
}
