/**
 * The webhook routes, as data (docs/webhooks.md): an organization's admins manage its endpoints,
 * read their secrets and delivery logs, send a test and retry a delivery. People only (`apiKeys`
 * stays off): the routes hand out signing secrets. An impersonated session cannot make, change or
 * rotate an endpoint, nor read its secret: it would keep receiving the organization's events, or
 * signing messages its receivers trust, after the session ends. The event types are public.
 */
import type { FastifyRequest } from 'fastify';
import { originOf } from '../audit/log.js';
import { ErrorBody, unauthorized } from '../http/errors.js';
import { ref, route, type Actor, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/module.js';
import {
  Accepted,
  CreatedWebhook,
  CreateWebhook,
  DeliveriesQuery,
  DeliveryPath,
  UpdateWebhook,
  Webhook,
  WebhookDeliveries,
  WebhookEventTypes,
  WebhookPath,
  Webhooks,
  WebhookSecret,
} from './schemas.js';
import type { WebhookCaller, WebhookService } from './service.js';

const error = ref(ErrorBody);

/** `orgRole` routes have both: the route layer checked them */
function caller(request: FastifyRequest, membership: Membership | undefined, actor: Actor | undefined): WebhookCaller {
  if (!membership || !actor) throw unauthorized();
  return { membership, actor, origin: originOf(request) };
}

const orgOf = (membership: Membership | undefined): string => {
  if (!membership) throw unauthorized();
  return membership.organizationId;
};

export function webhookRoutes(webhooks: WebhookService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['Webhooks'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/:id/webhooks',
        summary: 'Create a webhook endpoint',
        description:
          'Events of `events` (or every type with `["*"]`) are POSTed to `url`, signed per the Standard Webhooks specification ' +
          'with the returned `secret`. 400 with field errors for a URL that is not http(s) (https in prod), carries credentials, does not ' +
          'resolve, or is or resolves to a loopback, private, link-local, unique-local or unspecified address; and for an unknown event type. ' +
          '409 when the organization has 20 endpoints.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: OrgId, body: ref(CreateWebhook), response: { 201: ref(CreatedWebhook), 409: error } },
        handler: ({ request, parameters, membership, actor }) => webhooks.create(caller(request, membership, actor), parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/webhooks',
        summary: "The organization's webhook endpoints",
        description: 'Oldest first, without their secrets.',
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(Webhooks) } },
        handler: ({ membership }) => webhooks.list(orgOf(membership)),
      }),
      route({
        method: 'GET',
        path: '/:id/webhooks/:webhookId',
        summary: 'A webhook endpoint',
        description: 'Without its secret. 404 when it is not an endpoint of this organization.',
        orgRole: 'admin',
        schemas: { params: WebhookPath, response: { 200: ref(Webhook) } },
        handler: ({ parameters, membership }) => webhooks.get(orgOf(membership), parameters.path.webhookId),
      }),
      route({
        method: 'PATCH',
        path: '/:id/webhooks/:webhookId',
        summary: 'Change a webhook endpoint',
        description:
          'Sets `url`, `events`, `description` and/or `enabled` (a disabled endpoint is sent nothing; enabling it again ' +
          'forgets its failures). The URL is checked as at creation.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: WebhookPath, body: ref(UpdateWebhook), response: { 200: ref(Webhook) } },
        handler: ({ request, parameters, membership, actor }) =>
          webhooks.update(caller(request, membership, actor), parameters.path.webhookId, parameters.body),
      }),
      route({
        method: 'DELETE',
        path: '/:id/webhooks/:webhookId',
        summary: 'Delete a webhook endpoint',
        description: 'With its delivery log; nothing more is sent to it.',
        orgRole: 'admin',
        schemas: { params: WebhookPath, response: { 204: null } },
        async handler({ request, parameters, membership, actor }) {
          await webhooks.delete(caller(request, membership, actor), parameters.path.webhookId);
          return undefined;
        },
      }),
      route({
        method: 'GET',
        path: '/:id/webhooks/:webhookId/secret',
        summary: "A webhook endpoint's signing secret",
        description: 'The current `whsec_…` secret (stored encrypted).',
        orgRole: 'admin',
        // whoever holds the secret signs messages the receiver trusts, long after the session
        impersonation: 'forbidden',
        schemas: { params: WebhookPath, response: { 200: ref(WebhookSecret) } },
        handler: ({ parameters, membership }) => webhooks.secret(orgOf(membership), parameters.path.webhookId),
      }),
      route({
        method: 'POST',
        path: '/:id/webhooks/:webhookId/rotate-secret',
        summary: "Rotate a webhook endpoint's secret",
        description:
          'Answers the new secret. For 24 hours the previous one signs every message too (a second signature in ' +
          '`webhook-signature`), so the receiver can switch without missing a message.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: WebhookPath, response: { 200: ref(WebhookSecret) } },
        handler: ({ request, parameters, membership, actor }) => webhooks.rotateSecret(caller(request, membership, actor), parameters.path.webhookId),
      }),
      route({
        method: 'POST',
        path: '/:id/webhooks/:webhookId/test',
        summary: 'Send a test event',
        description:
          'Queues a `webhook.test` message for this endpoint, whatever its `events`; follow it in the deliveries. ' +
          "409 when the endpoint is disabled; 429 (`rate-limited`, Retry-After) past the organization's manual sends (`test` and `retry`, WEBHOOK_MANUAL_LIMIT).",
        orgRole: 'admin',
        schemas: { params: WebhookPath, response: { 202: ref(Accepted), 409: error, 429: error } },
        handler: ({ parameters, membership }) => webhooks.test(orgOf(membership), parameters.path.webhookId),
      }),
      route({
        method: 'GET',
        path: '/:id/webhooks/:webhookId/deliveries',
        summary: "A webhook endpoint's deliveries",
        description:
          'Newest first, each with its attempts (status code, duration, error, the first 4 KiB of the response); ' + '`status` filters; kept 30 days.',
        orgRole: 'admin',
        schemas: { params: WebhookPath, querystring: DeliveriesQuery, response: { 200: ref(WebhookDeliveries) } },
        handler: ({ parameters, membership }) => webhooks.deliveries(orgOf(membership), parameters.path.webhookId, parameters.query),
      }),
      route({
        method: 'POST',
        path: '/:id/webhooks/:webhookId/deliveries/:deliveryId/retry',
        summary: 'Retry a delivery',
        description:
          'Attempts the delivery once more, now. A failed delivery stays failed if this attempt fails too; a pending one ' +
          "keeps its schedule. 409 when the endpoint is disabled; 429 (`rate-limited`, Retry-After) past the organization's manual sends " +
          '(`test` and `retry`, WEBHOOK_MANUAL_LIMIT).',
        orgRole: 'admin',
        schemas: { params: DeliveryPath, response: { 202: ref(Accepted), 409: error, 429: error } },
        handler: ({ parameters, membership }) => webhooks.retry(orgOf(membership), parameters.path.webhookId, parameters.path.deliveryId),
      }),
    ],
  };
}

/** The event types, for the client's picker and receivers' developers. */
export function webhookEventTypeRoutes(eventTypes: readonly string[]): RouteGroup {
  const body = { 'event-types': [...eventTypes] };
  return {
    prefix: '/api/webhooks',
    tags: ['Webhooks'],
    auth: 'none',
    routes: [
      route({
        method: 'GET',
        path: '/event-types',
        summary: 'Webhook event types',
        description: "Every event type an endpoint can take (docs/webhooks.md describes each one's `data`).",
        schemas: { response: { 200: ref(WebhookEventTypes) } },
        handler: () => body,
      }),
    ],
  };
}
