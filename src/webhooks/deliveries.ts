/**
 * An endpoint's delivery log and its manual sends (docs/webhooks.md): the deliveries, newest
 * first with their attempts, paged by an opaque cursor; a test message and a retry, written like
 * any message and picked up by the worker at commit, both counted against the organization's limit.
 */
import { sql } from 'kysely';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DB } from '../db/database.js';
import type { WebhookDeliveryStatus } from '../db/schema.js';
import { conflict, notFound, requestCoercion } from '../http/errors.js';
import { take } from '../http/rate-limit.js';
import type { Logger } from '../logging/logger.js';
import { WEBHOOK_DUE_CHANNEL, webhookBody } from './outbox.js';
import type { WebhookDeliveries, WebhookDelivery } from './schemas.js';

export interface ManualSendDeps {
  db: DB;
  log: Logger;
  /** counts an organization's manual sends, `test` and `retry` (WEBHOOK_MANUAL_LIMIT); null: unlimited */
  manualLimiter: RateLimiterAbstract | null;
}

/** `next-cursor`: the last delivery's sequence number, base64url; opaque to clients. */
const encodeCursor = (seq: string) => Buffer.from(`d${seq}`).toString('base64url');

export function decodeCursor(cursor: string): string {
  const m = /^d([1-9][0-9]{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || BigInt(m[1]) > 9223372036854775807n) throw requestCoercion('query', [{ path: '/cursor', message: 'is not a cursor this service issued' }]);
  return m[1];
}

/** A page of the endpoint's deliveries, newest first, each with its attempts; `after`, a decoded cursor. */
export async function deliveryPage(
  db: DB,
  endpointId: string,
  limit: number,
  after: string | undefined,
  status?: WebhookDeliveryStatus,
): Promise<WebhookDeliveries> {
  let select = db
    .selectFrom('webhook_delivery as d')
    .innerJoin('webhook_message as m', 'm.id', 'd.message_id')
    .select(['d.id', 'd.seq', 'd.message_id', 'm.type', 'd.status', 'd.next_attempt_at', 'd.created_at'])
    .where('d.endpoint_id', '=', endpointId);
  if (status) select = select.where('d.status', '=', status);
  if (after !== undefined) select = select.where('d.seq', '<', sql<string>`${after}::bigint`);
  const rows = await select
    .orderBy('d.seq', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const attempts =
    page.length === 0
      ? []
      : await db
          .selectFrom('webhook_attempt')
          .select(['delivery_id', 'at', 'status_code', 'duration_ms', 'error', 'response'])
          .where(
            'delivery_id',
            'in',
            page.map((r) => r.id),
          )
          .orderBy('id')
          .execute();
  const byDelivery = new Map<string, WebhookDelivery['attempts']>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({ at: new Date(a.at).toISOString(), 'status-code': a.status_code, 'duration-ms': a.duration_ms, error: a.error, response: a.response });
    byDelivery.set(a.delivery_id, list);
  }
  return {
    deliveries: page.map((r) => ({
      id: r.id,
      'message-id': r.message_id,
      'event-type': r.type,
      status: r.status,
      attempts: byDelivery.get(r.id) ?? [],
      'next-attempt-at': r.next_attempt_at ? new Date(r.next_attempt_at).toISOString() : null,
      'created-at': new Date(r.created_at).toISOString(),
    })),
    'next-cursor': rows.length > limit ? encodeCursor(String(page[page.length - 1].seq)) : null,
  };
}

/**
 * 404 without the endpoint, 409 when it is disabled; 429 (Retry-After) past the organization's
 * manual sends: each is an attempt the worker makes now, beside the due ones.
 */
async function allowManualSend(deps: ManualSendDeps, organizationId: string, webhookId: string): Promise<void> {
  const endpoint = await deps.db
    .selectFrom('webhook_endpoint')
    .select(['enabled'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', webhookId)
    .executeTakeFirst();
  if (!endpoint) throw notFound('No such webhook endpoint', { 'webhook-id': webhookId });
  if (!endpoint.enabled) throw conflict('The endpoint is disabled: enable it first', { reason: 'webhook-disabled' });
  if (deps.manualLimiter) await take(deps.manualLimiter, organizationId);
}

/** Queues a `webhook.test` message for this endpoint alone, whatever its `events`; 409 when it is disabled. */
export async function queueTestMessage(deps: ManualSendDeps, organizationId: string, id: string): Promise<{ 'delivery-id': string }> {
  await allowManualSend(deps, organizationId, id);
  const payload = webhookBody('webhook.test', organizationId, { webhook: { id } });
  const { rows } = await sql<{ id: string }>`
    with message as (
      insert into webhook_message (organization_id, type, payload) values (${organizationId}, 'webhook.test', ${payload}) returning id
    ), delivery as (
      insert into webhook_delivery (message_id, endpoint_id, next_attempt_at) select message.id, cast(${id} as uuid), now() from message returning id
    )
    select delivery.id, pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from delivery`.execute(deps.db);
  return { 'delivery-id': rows[0].id };
}

/**
 * Attempts a delivery once more, now. A failed (or succeeded) one becomes pending for that one
 * attempt: if it fails, the delivery is failed again, with no further retries. A pending one
 * is attempted now and keeps its schedule. 409 when the endpoint is disabled.
 */
export async function retryDelivery(deps: ManualSendDeps, organizationId: string, webhookId: string, deliveryId: string): Promise<{ 'delivery-id': string }> {
  await allowManualSend(deps, organizationId, webhookId);
  const { rows } = await sql<{ id: string }>`
    with retried as (
      update webhook_delivery
      set manual = case when status = 'pending' then manual else true end, status = 'pending', next_attempt_at = now(), completed_at = null
      where id = ${deliveryId} and endpoint_id = ${webhookId}
      returning id
    )
    select retried.id, pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from retried`.execute(deps.db);
  if (rows.length === 0) throw notFound('No such delivery', { 'delivery-id': deliveryId });
  deps.log.info('webhooks/retry-requested', 'Webhook delivery retry requested', {
    'organization-id': organizationId,
    'webhook-id': webhookId,
    'delivery-id': deliveryId,
  });
  return { 'delivery-id': deliveryId };
}
