/**
 * Billing's answers when Stripe cannot be used (docs/billing.md, "The API"): 503 without
 * STRIPE_SECRET_KEY, 502 for a failed Stripe call.
 */
import { HttpError } from '../http/errors.js';
import { msg } from '../i18n/messages.js';
import type { StripeGatewayError } from './stripe-gateway.js';

/** 503 `billing-not-configured`: no STRIPE_SECRET_KEY, so checkout and the portal cannot be offered. */
export const notConfigured = () =>
  new HttpError(503, {
    type: 'billing-not-configured',
    message: 'Billing is not set up on this server: STRIPE_SECRET_KEY is not configured',
  });

/** A failed Stripe call as 502 `payment-provider-error`: what went wrong in general, Stripe's code and request id, no secret. */
export function providerError(err: StripeGatewayError): HttpError {
  const messages: Record<StripeGatewayError['failure'], string> = {
    authentication: msg("The payment provider refused this server's credentials; billing needs its operator's attention"),
    permission: msg("The payment provider does not allow this server to do this; billing needs its operator's attention"),
    connection: msg('The payment provider could not be reached; try again in a moment'),
    'rate-limit': msg('The payment provider is busy; try again in a moment'),
    'invalid-request': msg('The payment provider refused the request'),
    idempotency: msg('The payment provider saw this request with other details a moment ago; try again in a moment'),
    api: msg('The payment provider failed; try again in a moment'),
    'no-url': msg('The payment provider answered without a page to go to'),
  };
  return new HttpError(502, {
    type: 'payment-provider-error',
    message: messages[err.failure],
    failure: err.failure,
    ...(err.code ? { 'provider-code': err.code } : {}),
    ...(err.param ? { 'provider-param': err.param } : {}),
    ...(err.requestId ? { 'provider-request-id': err.requestId } : {}),
  });
}
