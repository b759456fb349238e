/**
 * What a payment provider module supplies: verification of a webhook request from its raw
 * bytes, and the mapping of the provider's events to the few effects this service applies.
 * A second provider is one new module implementing this interface, added to the list in
 * `system.ts`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SubscriptionStatus } from '../db/schema.js';

/** The effects an event may have on an account. */
export type PaymentEffect =
  | { kind: 'link-customer'; accountId: string; customerId: string }
  | { kind: 'subscription'; customerId: string; status: SubscriptionStatus; plan: string | null; periodEnd: Date | null }
  | { kind: 'payment-failed'; customerId: string }
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

export class InvalidEventError extends Error {
  constructor(message: string) {
    super(message);
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
