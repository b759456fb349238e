/** Named schemas of the webhook routes (docs/webhooks.md). */
import { Type, type Static, type TSchema } from 'typebox';
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES } from './event-types.js';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()]);

/** The `events` of an endpoint: some of `types` (the built-in ones and those modules declare), or `*`. */
function eventsSchema(types: readonly string[]) {
  const type = Type.Enum([...types, ALL_EVENTS], { description: 'an event type (`GET /api/webhooks/event-types`), or `*` for every type' });
  return Type.Array(type, {
    minItems: 1,
    maxItems: types.length + 1,
    uniqueItems: true,
    description: 'the event types sent to the endpoint, or `["*"]` for all (`webhook.test` is sent whatever this says)',
  });
}
const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'where events are POSTed: `https://` (or `http://` outside prod), no credentials; a host that is or resolves to a ' +
    'loopback, private, link-local, unique-local or unspecified address is refused',
});
const Description = Type.String({ maxLength: 500, description: 'what the endpoint is for' });

const webhookFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.String(),
  enabled: Type.Boolean({ description: 'a disabled endpoint is sent nothing' }),
  'disabled-reason': Nullable(Type.String({ description: '`failing`: disabled after its attempts all failed for WEBHOOK_DISABLE_AFTER' })),
  'created-at': Type.String({ format: 'date-time' }),
};

export const Webhook = Type.Object(webhookFields, { $id: 'webhook', additionalProperties: false, description: 'An endpoint, without its secret' });
export type Webhook = Static<typeof Webhook>;

export const CreatedWebhook = Type.Object(
  { ...webhookFields, secret: Type.String({ description: '`whsec_<base64>`: verifies the `webhook-signature` header' }) },
  { $id: 'created-webhook', additionalProperties: false },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const Webhooks = Type.Object({ webhooks: Type.Array(Webhook, { description: 'oldest first' }) }, { $id: 'webhooks', additionalProperties: false });
export type Webhooks = Static<typeof Webhooks>;

const createWebhook = (types: readonly string[]) =>
  Type.Object({ url: Url, events: eventsSchema(types), description: Type.Optional(Description) }, { $id: 'create-webhook', additionalProperties: false });
export const CreateWebhook = createWebhook(WEBHOOK_EVENT_TYPES);
export type CreateWebhook = Static<typeof CreateWebhook>;

const updateWebhook = (types: readonly string[]) =>
  Type.Object(
    { url: Type.Optional(Url), events: Type.Optional(eventsSchema(types)), description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
    { $id: 'update-webhook', additionalProperties: false, minProperties: 1 },
  );
export const UpdateWebhook = updateWebhook(WEBHOOK_EVENT_TYPES);
export type UpdateWebhook = Static<typeof UpdateWebhook>;

export const WebhookSecret = Type.Object({ secret: Type.String({ description: '`whsec_<base64>`' }) }, { $id: 'webhook-secret', additionalProperties: false });
export type WebhookSecret = Static<typeof WebhookSecret>;

export const WebhookEventTypes = Type.Object({ 'event-types': Type.Array(Type.String()) }, { $id: 'webhook-event-types', additionalProperties: false });

export const WebhookAttempt = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    'status-code': Nullable(Type.Integer({ description: 'null when no response came' })),
    'duration-ms': Type.Integer({ minimum: 0 }),
    error: Nullable(
      Type.String({
        description:
          '`timeout`, `address-not-allowed`, `dns-failed`, `connection-refused`, `tls-error`, `connection-failed`, ' +
          '`redirect-not-followed`, `unexpected-status`; null for a success',
      }),
    ),
    response: Nullable(Type.String({ description: 'the first 4 KiB of the response body' })),
  },
  { $id: 'webhook-attempt', additionalProperties: false },
);

export const DeliveryStatus = Type.Enum(['pending', 'succeeded', 'failed']);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    'message-id': Type.String({ description: 'the `webhook-id` header: the same on every attempt; receivers deduplicate by it' }),
    'event-type': Type.String(),
    status: DeliveryStatus,
    attempts: Type.Array(WebhookAttempt, { description: 'oldest first' }),
    'next-attempt-at': Nullable(Type.String({ format: 'date-time', description: 'while pending' })),
    'created-at': Type.String({ format: 'date-time' }),
  },
  { $id: 'webhook-delivery', additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveries = Type.Object(
  {
    deliveries: Type.Array(WebhookDelivery, { description: 'newest first; kept 30 days' }),
    'next-cursor': Nullable(Type.String({ description: 'pass as `cursor` for the next (older) page; null on the last page' })),
  },
  { $id: 'webhook-deliveries', additionalProperties: false },
);
export type WebhookDeliveries = Static<typeof WebhookDeliveries>;

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next-cursor` of the previous page' })),
    status: Type.Optional(DeliveryStatus),
  },
  { additionalProperties: false },
);

export const WebhookPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), webhookId: Type.String({ format: 'uuid', description: "the endpoint's id" }) },
  { additionalProperties: false },
);
export const DeliveryPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), webhookId: Type.String({ format: 'uuid' }), deliveryId: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

export const Accepted = Type.Object(
  { 'delivery-id': Type.String({ format: 'uuid', description: "follow it in the endpoint's deliveries" }) },
  { $id: 'webhook-accepted', additionalProperties: false },
);

export const WEBHOOK_SCHEMAS: TSchema[] = [
  Webhook,
  CreatedWebhook,
  Webhooks,
  CreateWebhook,
  UpdateWebhook,
  WebhookSecret,
  WebhookEventTypes,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveries,
  Accepted,
];

/**
 * The named schemas for the system's event types: the built-in list when no module declares
 * more. Kept by list, so every system built in a process with the same types has the same
 * schema objects (the validators compiled for them are reused: src/http/validators.ts).
 */
const schemasByTypes = new Map<string, TSchema[]>();
export function webhookSchemas(eventTypes: readonly string[]): TSchema[] {
  const key = eventTypes.join(' ');
  if (key === WEBHOOK_EVENT_TYPES.join(' ')) return WEBHOOK_SCHEMAS;
  let schemas = schemasByTypes.get(key);
  if (!schemas) {
    schemas = WEBHOOK_SCHEMAS.map((schema) =>
      schema === CreateWebhook ? createWebhook(eventTypes) : schema === UpdateWebhook ? updateWebhook(eventTypes) : schema,
    );
    schemasByTypes.set(key, schemas);
  }
  return schemas;
}
