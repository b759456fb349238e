/**
 * What a payment provider module supplies: verification of a webhook request from its raw
 * bytes, and the mapping of the provider's events to the few effects this service applies.
 * A second provider is one new module implementing this interface, added to the list in
 * `system.ts`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SubscriptionStatus } from '../db/schema.js';
import type { Words } from '../http/errors.js';
import { english } from '../i18n/messages.js';

/**
 * The effects an event may have on an organization's billing (src/payments/effects.ts applies
 * them). `reference` is what the app gave the checkout as its reference: an organization id,
 * or (events from before billing moved to organizations) an account id naming its personal one.
 */
export type PaymentEffect =
  | { kind: 'checkout-completed'; reference: string; customerId: string; subscriptionId: string | null }
  | {
      kind: 'subscription';
      customerId: string;
      subscriptionId: string | null;
      status: SubscriptionStatus;
      /** the provider's price (or legacy plan) id; BILLING_PLANS names its plan */
      priceId: string | null;
      periodEnd: Date | null;
      /** the current period's start (on the subscription, or on its items in newer API versions) */
      periodStart?: Date | null;
      /** every item: its id, price and quantity (the seat sync sets the per-seat item's quantity) */
      items?: Array<{ id: string; price: string; quantity: number | null }>;
      cancelAtPeriodEnd: boolean;
      /** the subscription ended for good (Stripe's `canceled`, `incomplete_expired`, or its deletion): nothing moves it out */
      final: boolean;
      /** set when the event announces the end of the trial: the owners get a notice */
      trialEnding: { endsAt: Date } | null;
    }
  | { kind: 'invoice'; customerId: string; subscriptionId: string | null; outcome: 'paid' | 'payment-failed'; amountPaid: number }
  | { kind: 'none'; customerId: string | null };

export interface PaymentEvent {
  id: string;
  type: string;
  createdAt: Date;
  effect: PaymentEffect;
}

export class InvalidSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSignatureError';
  }
}

/** `words`: what is wrong with the event, the message of the 400 `invalid-event` answer. */
export class InvalidEventError extends Error {
  constructor(readonly words: Words) {
    super(english(words));
    this.name = 'InvalidEventError';
  }
}

export interface PaymentProvider {
  /** the path segment: `/api/webhooks/<name>` */
  name: string;
  /** throws {@link InvalidSignatureError} unless the raw body is signed by the provider */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders, now: Date): void;
  /** parses verified bytes; throws {@link InvalidEventError} when they are not an event */
  parse(rawBody: Buffer): PaymentEvent;
}
