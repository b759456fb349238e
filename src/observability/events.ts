/**
 * The outcomes services report for metrics, as plain callbacks: a service takes an optional
 * `(outcome) => void` and knows nothing of Prometheus (src/observability/metrics.ts counts them).
 */

/** How a log-in ended: right password, wrong email or password, or refused by the failure limit. */
export type LogInOutcome = 'success' | 'failure' | 'rate-limited';

/** How a webhook delivery ended: stored, already stored, refused for its signature or its content. */
export type WebhookOutcome = 'received' | 'duplicate' | 'invalid-signature' | 'invalid-event';

/** One delivery attempt of an outbox message: sent, failed and retried later, or failed for good. */
export type MailDeliveryOutcome = 'sent' | 'retry' | 'failed';

export interface AppEvents {
  logIn(outcome: LogInOutcome): void;
  /** `type` is the provider's event type once the signature is verified, `unknown` before */
  webhook(provider: string, type: string, outcome: WebhookOutcome): void;
  mailDelivery(outcome: MailDeliveryOutcome): void;
}
