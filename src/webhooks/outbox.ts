/**
 * Emitting webhook events: the one function the services that cause events (organizations,
 * invitations, billing, API keys) call, inside the transaction of their change, like the audit
 * log's `appendAudit`:
 *
 *   await db.transaction().execute(async (trx) => {
 *     await trx.updateTable('membership').set({ role }).where(...).execute();
 *     await emitWebhookEvent(trx, organizationId, 'member.updated', { member });
 *   });
 *
 * The message exists exactly when the change commits: nothing is sent for a change that rolled
 * back, and nothing is lost when the process dies after the commit (the worker finds it in the
 * table). It is one statement: the message and one delivery per live endpoint that takes the
 * type, written only when there is such an endpoint, so an organization without endpoints pays
 * one look-up on a partial index and writes nothing. Its `pg_notify` wakes every instance's
 * worker when (and only if) the transaction commits. The worker is src/webhooks/worker.ts.
 */
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { ALL_EVENTS, type WebhookEventType } from './event-types.js';

/** An event type a module declares (event-types.ts, DeclaredWebhookEventType), such as `project.created`. */
type DeclaredType = `${string}.${string}`;

/** The channel that wakes the delivery workers; its notification comes at commit. */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

/** The subject of an event, in the API's own kebab-case shape, keyed by its kind (`member`, `invitation`, ...). */
export type WebhookEventData = Record<string, unknown>;

/** The body every endpoint receives: `{type, timestamp, data}`, `data` with `organization-id` first. */
export function webhookBody(type: WebhookEventType | DeclaredType, organizationId: string, data: WebhookEventData, at = new Date()): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data: { 'organization-id': organizationId, ...data } });
}

/**
 * Writes an event for the organization's live endpoints that take `type`, through `executor`:
 * pass the transaction of the change. Resolves to the message id (`msg_…`, the `webhook-id`
 * header), or null when no endpoint takes it (nothing was written).
 */
export async function emitWebhookEvent(
  executor: Kysely<DatabaseSchema>,
  organizationId: string,
  type: Exclude<WebhookEventType, 'webhook.test'> | DeclaredType,
  data: WebhookEventData,
): Promise<string | null> {
  const payload = webhookBody(type, organizationId, data);
  const { rows } = await sql<{ id: string }>`
    with endpoints as (
      select id from webhook_endpoint
      where organization_id = ${organizationId} and enabled and (cast(${type} as text) = any(events) or cast(${ALL_EVENTS} as text) = any(events))
    ), message as (
      insert into webhook_message (organization_id, type, payload)
      select cast(${organizationId} as uuid), cast(${type} as text), cast(${payload} as text) where exists (select 1 from endpoints)
      returning id
    ), deliveries as (
      insert into webhook_delivery (message_id, endpoint_id, next_attempt_at)
      select message.id, endpoints.id, now() from message, endpoints
      returning id
    )
    select message.id, pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from message`.execute(executor);
  return rows[0]?.id ?? null;
}
