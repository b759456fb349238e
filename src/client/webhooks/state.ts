/**
 * The Webhooks page's types and state slice, apart from its events so that app.ts can compose
 * the slice without importing the events (which import app.ts): no import cycle.
 */
export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  'disabled-reason': string | null;
  'created-at': string;
}

export interface WebhookAttempt {
  at: string;
  'status-code': number | null;
  'duration-ms': number;
  error: string | null;
  response: string | null;
}

export interface WebhookDelivery {
  id: string;
  'message-id': string;
  'event-type': string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: WebhookAttempt[];
  'next-attempt-at': string | null;
  'created-at': string;
}

export type DeliveryFilter = '' | 'pending' | 'succeeded' | 'failed';

export interface WebhooksState {
  webhooksPage?: {
    orgId: string;
    status: 'loading' | 'ready' | 'missing';
    /** the organization, as `GET /api/orgs/:id` answers it (only what the page reads is typed here) */
    org?: { id: string; name: string; role: 'owner' | 'admin' | 'member' };
    eventTypes?: string[];
    webhooks?: Webhook[];
    /** secrets shown, by endpoint id (made, revealed or rotated on this visit) */
    secrets: Record<string, string>;
    /** the create form's field errors from the server, by field (`url`, `events`, `description`) */
    fieldErrors: Record<string, string>;
    /** success count of the create form (keys it, so a success clears it) */
    formResets: number;
    /** the endpoint whose deliveries are shown */
    log?: { webhookId: string; filter: DeliveryFilter; items?: WebhookDelivery[]; nextCursor: string | null };
  };
}
