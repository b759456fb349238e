/**
 * An organization's webhook endpoints (docs/webhooks.md): made, changed and deleted by admins,
 * each change audited in its own transaction; secrets sealed with ENCRYPTION_KEY and read back
 * only by admins. The routes' one service: the URL rules are endpoint-url.ts's, the delivery log
 * and the manual sends (a test event, a retry) deliveries.ts's.
 */
import { phrase } from '../i18n/messages.js';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema, WebhookDeliveryStatus } from '../db/schema.js';
import { conflict, notFound } from '../http/errors.js';
import type { Actor, Membership } from '../http/routes.js';
import { decodeCursor, deliveryPage, queueTestMessage, retryDelivery, type ManualSendDeps } from './deliveries.js';
import { checkEndpointUrl, type EndpointUrlRules } from './endpoint-url.js';
import { ALL_EVENTS } from './event-types.js';
import type { CreatedWebhook, CreateWebhook, UpdateWebhook, Webhook, WebhookDeliveries, Webhooks, WebhookSecret } from './schemas.js';
import { newWebhookSecret } from './signing.js';
import type { Selectable } from 'kysely';

/** An organization has at most this many endpoints: each event fans out to every one. */
export const MAX_ENDPOINTS = 20;
/** how long the secret before a rotation still signs */
export const PREVIOUS_SECRET_HOURS = 24;

const ENDPOINT_COLUMNS = ['id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at'] as const;
type EndpointRow = Pick<Selectable<DatabaseSchema['webhook_endpoint']>, (typeof ENDPOINT_COLUMNS)[number]>;

/** Who changes an endpoint, from where: an admin's membership, who acts, the request's origin. */
export interface WebhookCaller {
  membership: Membership;
  actor: Actor;
  origin: RequestOrigin;
}

export interface WebhookServiceDeps extends EndpointUrlRules, ManualSendDeps {
  /** seals secrets (ENCRYPTION_KEY, purpose `webhook-secret`) with the endpoint id as associated data */
  box: SecretBox;
}

function toWebhook(row: EndpointRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: [...row.events],
    description: row.description,
    enabled: row.enabled,
    'disabled-reason': row.disabled_reason,
    'created-at': new Date(row.created_at).toISOString(),
  };
}

/** `["*"]` stands for every type: with it, the others add nothing. */
const normalizeEvents = (events: readonly string[]): string[] => (events.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...events]);

/** The audit entry's view of a URL: its host (a query may carry a receiver's token: never recorded). */
const hostOf = (url: string): string => new URL(url).host;

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** The URL an endpoint may have, normalized; a 400 naming `/url` otherwise (endpoint-url.ts). */
  async checkUrl(raw: string): Promise<string> {
    return checkEndpointUrl(raw, this.deps);
  }

  /** A new endpoint of the caller's organization, with its secret (readable again at `GET …/secret`). */
  async create(caller: WebhookCaller, input: CreateWebhook): Promise<CreatedWebhook> {
    const url = await this.checkUrl(input.url);
    const organizationId = caller.membership.organizationId;
    const id = randomUUID();
    const secret = newWebhookSecret();
    const events = normalizeEvents(input.events);
    const row = await this.deps.db.transaction().execute(async (trx) => {
      // one endpoint is made at a time per organization: the limit holds under concurrent creation
      await trx.selectFrom('organization').select('id').where('id', '=', organizationId).forUpdate().executeTakeFirstOrThrow();
      const { n } = await trx
        .selectFrom('webhook_endpoint')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_ENDPOINTS)
        throw conflict(phrase('An organization has at most {max} webhook endpoints', { max: MAX_ENDPOINTS }), { reason: 'too-many-webhooks' });
      const inserted = await trx
        .insertInto('webhook_endpoint')
        .values({
          id,
          organization_id: organizationId,
          url,
          events,
          description: input.description?.trim() ?? '',
          secret_sealed: this.deps.box.seal(secret, id),
        })
        .returning(ENDPOINT_COLUMNS)
        .executeTakeFirstOrThrow();
      await this.audit(trx, caller, 'webhook.created', id, { host: hostOf(url), events: events.join(',') });
      return inserted;
    });
    this.deps.log.info('webhooks/created', 'Webhook endpoint created', { 'organization-id': organizationId, 'webhook-id': id, host: hostOf(url) });
    return { ...toWebhook(row), secret };
  }

  async list(organizationId: string): Promise<Webhooks> {
    const rows = await this.deps.db
      .selectFrom('webhook_endpoint')
      .select(ENDPOINT_COLUMNS)
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return { webhooks: rows.map(toWebhook) };
  }

  async get(organizationId: string, id: string): Promise<Webhook> {
    const row = await this.deps.db
      .selectFrom('webhook_endpoint')
      .select(ENDPOINT_COLUMNS)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('No such webhook endpoint', { 'webhook-id': id });
    return toWebhook(row);
  }

  /** Changes what is given; turning an endpoint on again forgets its failures. */
  async update(caller: WebhookCaller, id: string, input: UpdateWebhook): Promise<Webhook> {
    const url = input.url === undefined ? undefined : await this.checkUrl(input.url);
    const organizationId = caller.membership.organizationId;
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const before = await trx
        .selectFrom('webhook_endpoint')
        .select(ENDPOINT_COLUMNS)
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!before) throw notFound('No such webhook endpoint', { 'webhook-id': id });
      const events = input.events && normalizeEvents(input.events);
      const after = await trx
        .updateTable('webhook_endpoint')
        .set({
          ...(url !== undefined ? { url } : {}),
          ...(events ? { events } : {}),
          ...(input.description !== undefined ? { description: input.description.trim() } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled, disabled_reason: null } : {}),
          ...(input.enabled === true && !before.enabled ? { failing_since: null } : {}),
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', id)
        .returning(ENDPOINT_COLUMNS)
        .executeTakeFirstOrThrow();
      const changed = (Object.keys(input) as Array<keyof UpdateWebhook>).filter((k) => input[k] !== undefined);
      await this.audit(trx, caller, 'webhook.updated', id, {
        fields: changed.join(','),
        host: hostOf(after.url),
        events: after.events.join(','),
        enabled: after.enabled,
      });
      return after;
    });
    this.deps.log.info('webhooks/updated', 'Webhook endpoint updated', { 'organization-id': organizationId, 'webhook-id': id, enabled: row.enabled });
    return toWebhook(row);
  }

  /** Deletes the endpoint with its deliveries. */
  async delete(caller: WebhookCaller, id: string): Promise<void> {
    const organizationId = caller.membership.organizationId;
    await this.deps.db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('webhook_endpoint')
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .returning(['url'])
        .executeTakeFirst();
      if (!gone) throw notFound('No such webhook endpoint', { 'webhook-id': id });
      await this.audit(trx, caller, 'webhook.deleted', id, { host: hostOf(gone.url) });
    });
    this.deps.log.info('webhooks/deleted', 'Webhook endpoint deleted', { 'organization-id': organizationId, 'webhook-id': id });
  }

  /** The endpoint's current secret. */
  async secret(organizationId: string, id: string): Promise<WebhookSecret> {
    const row = await this.deps.db
      .selectFrom('webhook_endpoint')
      .select(['secret_sealed'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('No such webhook endpoint', { 'webhook-id': id });
    return { secret: this.deps.box.open(row.secret_sealed, id) };
  }

  /** A new secret; the one it replaces signs too for 24 hours, so receivers can switch without missing a message. */
  async rotateSecret(caller: WebhookCaller, id: string): Promise<WebhookSecret> {
    const organizationId = caller.membership.organizationId;
    const secret = newWebhookSecret();
    await this.deps.db.transaction().execute(async (trx) => {
      const rotated = await trx
        .updateTable('webhook_endpoint')
        .set({
          previous_secret_sealed: sql<string>`secret_sealed`,
          previous_secret_expires_at: sql<Date>`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})`,
          secret_sealed: this.deps.box.seal(secret, id),
          updated_at: sql<Date>`now()`,
        })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .returning(['id'])
        .executeTakeFirst();
      if (!rotated) throw notFound('No such webhook endpoint', { 'webhook-id': id });
      await this.audit(trx, caller, 'webhook.secret-rotated', id, { 'previous-valid-hours': PREVIOUS_SECRET_HOURS });
    });
    this.deps.log.info('webhooks/secret-rotated', 'Webhook secret rotated', { 'organization-id': organizationId, 'webhook-id': id });
    return { secret };
  }

  /** Queues a `webhook.test` message for this endpoint alone (deliveries.ts); 409 when it is disabled. */
  async test(organizationId: string, id: string): Promise<{ 'delivery-id': string }> {
    return queueTestMessage(this.deps, organizationId, id);
  }

  /** The endpoint's deliveries, newest first, each with its attempts. */
  async deliveries(organizationId: string, id: string, query: { limit?: number; cursor?: string; status?: WebhookDeliveryStatus }): Promise<WebhookDeliveries> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    await this.get(organizationId, id);
    return deliveryPage(this.deps.db, id, query.limit ?? 20, after, query.status);
  }

  /** Attempts a delivery once more, now, outside its schedule (deliveries.ts); 409 when the endpoint is disabled. */
  async retry(organizationId: string, webhookId: string, deliveryId: string): Promise<{ 'delivery-id': string }> {
    return retryDelivery(this.deps, organizationId, webhookId, deliveryId);
  }

  private audit(trx: DB, caller: WebhookCaller, action: string, id: string, details: Record<string, string | number | boolean>): Promise<void> {
    const accountId = 'accountId' in caller.actor ? caller.actor.accountId : null;
    return appendAudit(trx, {
      action,
      organizationId: caller.membership.organizationId,
      accountId,
      actor: caller.actor,
      target: { type: 'webhook', id },
      details,
      origin: caller.origin,
    });
  }
}
