/**
 * The event types an organization's endpoints can take, and the data each carries beside
 * `organization-id` (docs/webhooks.md, "Event types"). Emitting services name
 * them; the routes validate `events` against them.
 */
export const WEBHOOK_EVENT_TYPES = [
  'organization.updated',
  'member.added',
  'member.updated',
  'member.removed',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'subscription.updated',
  'api-key.created',
  'api-key.revoked',
  'usage.threshold-reached',
  'webhook.test',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * What a module declares (`declares: {[WEBHOOK_EVENT_TYPES_KEY]: [...]}` in its definition) to add
 * event types of its own: `type` (`<subject>.<verb>`) and the key of its subject in `data`.
 */
export interface DeclaredWebhookEventType {
  type: string;
  subject: string;
}
export const WEBHOOK_EVENT_TYPES_KEY = 'webhooks/event-types';

/** `events: ["*"]`: every type, those added later included. */
export const ALL_EVENTS = '*';

/** The key of each type's subject in `data` (the API's own shape of it). */
export const SUBJECT_OF: Readonly<Record<WebhookEventType, string>> = {
  'organization.updated': 'organization',
  'member.added': 'member',
  'member.updated': 'member',
  'member.removed': 'member',
  'invitation.created': 'invitation',
  'invitation.accepted': 'invitation',
  'invitation.revoked': 'invitation',
  'subscription.updated': 'subscription',
  'api-key.created': 'api-key',
  'api-key.revoked': 'api-key',
  'usage.threshold-reached': 'usage',
  'webhook.test': 'webhook',
};
