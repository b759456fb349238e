/**
 * The Idempotency-Key of a Checkout Session (docs/billing.md, "The API"): a repeated checkout
 * request with the same facts within a window gets Stripe's first session back.
 */
import { createHash } from 'node:crypto';
import type { CheckoutSessionParams } from './stripe-gateway.js';

/**
 * How long a repeated checkout request with the same facts gets the same session back: a
 * double click, or "back" from Stripe and the same button again. A later request, or one
 * after a real change (another plan, the organization got a customer, another caller), makes
 * a new session.
 */
export const CHECKOUT_IDEMPOTENCY_WINDOW_MS = 10 * 60 * 1000;

/**
 * The Idempotency-Key of a checkout: a hash of the caller, every parameter sent, and the
 * current {@link CHECKOUT_IDEMPOTENCY_WINDOW_MS} window. A double click sends the same key and
 * Stripe answers the first session again; any change of what would be sent, or a later window,
 * is a new key (Stripe refuses a key reused with other parameters).
 */
export function checkoutIdempotencyKey(accountId: string, params: CheckoutSessionParams, now: Date): string {
  const window = Math.floor(now.getTime() / CHECKOUT_IDEMPOTENCY_WINDOW_MS);
  const digest = createHash('sha256')
    .update(JSON.stringify([accountId, params, window]))
    .digest('base64url');
  return `checkout-${digest}`;
}
