/**
 * An organization's webhook endpoints and their delivery log (docs/webhooks.md): made, changed
 * and deleted by admins, each change audited in its own transaction; secrets sealed with
 * ENCRYPTION_KEY and read back only by admins; a test event and a manual retry, both written
 * like any message and picked up by the worker at commit.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema, WebhookDeliveryStatus } from '../db/schema.js';
import { conflict, notFound, requestCoercion } from '../http/errors.js';
import { take } from '../http/rate-limit.js';
import type { Actor, Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { AddressNotAllowed, allowedAddresses, bareHost, HostNotFound, type AddressRefusal, type HostResolver } from './address-guard.js';
import { ALL_EVENTS } from './event-types.js';
import { WEBHOOK_DUE_CHANNEL, webhookBody } from './outbox.js';
import type { CreatedWebhook, CreateWebhook, UpdateWebhook, Webhook, WebhookDeliveries, WebhookDelivery, Webhooks, WebhookSecret } from './schemas.js';
import { newWebhookSecret } from './signing.js';
import type { Selectable } from 'kysely';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

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

export interface WebhookServiceDeps {
  db: DB;
  log: Logger;
  /** seals secrets (ENCRYPTION_KEY, purpose `webhook-secret`) with the endpoint id as associated data */
  box: SecretBox;
  resolve: HostResolver;
  allowPrivate: boolean;
  requireHttps: boolean;
  /** how long resolving a URL's host may take at creation (WEBHOOK_TIMEOUT) */
  resolveTimeoutMs: number;
  /** counts an organization's manual sends, `test` and `retry` (WEBHOOK_MANUAL_LIMIT); null: unlimited */
  manualLimiter: RateLimiterAbstract | null;
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

const REFUSALS: Record<AddressRefusal, string> = {
  'link-local': 'must not point to a link-local address (169.254.0.0/16, fe80::/10, cloud metadata services)',
  private: 'must not point to a loopback, private, unique-local or unspecified address',
  'not-routable': 'must point to a public unicast address',
};

/** `["*"]` stands for every type: with it, the others add nothing. */
const normalizeEvents = (events: readonly string[]): string[] => (events.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...events]);

/** The audit entry's view of a URL: its host (a query may carry a receiver's token: never recorded). */
const hostOf = (url: string): string => new URL(url).host;

/** `next-cursor`: the last delivery's sequence number, base64url; opaque to clients. */
const encodeCursor = (seq: string) => Buffer.from(`d${seq}`).toString('base64url');

function decodeCursor(cursor: string): string {
  const m = /^d([1-9][0-9]{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || BigInt(m[1]) > 9223372036854775807n) throw requestCoercion('query', [{ path: '/cursor', message: 'is not a cursor this service issued' }]);
  return m[1];
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /**
   * The URL an endpoint may have, normalized; a 400 naming `/url` otherwise: not an absolute
   * http(s) URL, http in prod, credentials or a fragment in it, a host that does not resolve,
   * or one that is or resolves to an address the SSRF rules refuse (address-guard.ts).
   */
  async checkUrl(raw: string): Promise<string> {
    const refuse = (message: string) => requestCoercion('body', [{ path: '/url', message }]);
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw refuse('must be an absolute URL such as https://example.com/webhooks');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an http(s) URL');
    if (this.deps.requireHttps && url.protocol !== 'https:') throw refuse('must be https');
    if (url.username || url.password) throw refuse('must not carry credentials (user:password@)');
    if (url.hash) throw refuse('must not have a fragment (#...)');
    if (!url.hostname) throw refuse('must name a host');
    let timer: NodeJS.Timeout | undefined;
    try {
      // getaddrinfo has no timeout of its own: a name server that never answers must not hold the request
      const slow = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('resolution timed out')), this.deps.resolveTimeoutMs);
      });
      await Promise.race([allowedAddresses(bareHost(url), this.deps.resolve, this.deps.allowPrivate), slow]);
    } catch (err) {
      if (err instanceof AddressNotAllowed) throw refuse(REFUSALS[err.refusal]);
      if (err instanceof HostNotFound) throw refuse(`names a host that does not resolve (${url.hostname})`);
      throw refuse('names a host that could not be resolved now; try again');
    } finally {
      clearTimeout(timer);
    }
    const href = url.href;
    if (href.length > 2000) throw refuse('must be at most 2000 characters');
    return href;
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
      if (Number(n) >= MAX_ENDPOINTS) throw conflict(`An organization has at most ${MAX_ENDPOINTS} webhook endpoints`, { reason: 'too-many-webhooks' });
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

  /** Queues a `webhook.test` message for this endpoint alone, whatever its `events`; 409 when it is disabled. */
  async test(organizationId: string, id: string): Promise<{ 'delivery-id': string }> {
    const endpoint = await this.deps.db
      .selectFrom('webhook_endpoint')
      .select(['enabled'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!endpoint) throw notFound('No such webhook endpoint', { 'webhook-id': id });
    if (!endpoint.enabled) throw conflict('The endpoint is disabled: enable it first', { reason: 'webhook-disabled' });
    await this.countManualSend(organizationId);
    const payload = webhookBody('webhook.test', organizationId, { webhook: { id } });
    const { rows } = await sql<{ id: string }>`
      with message as (
        insert into webhook_message (organization_id, type, payload) values (${organizationId}, 'webhook.test', ${payload}) returning id
      ), delivery as (
        insert into webhook_delivery (message_id, endpoint_id, next_attempt_at) select message.id, cast(${id} as uuid), now() from message returning id
      )
      select delivery.id, pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from delivery`.execute(this.deps.db);
    return { 'delivery-id': rows[0].id };
  }

  /** The endpoint's deliveries, newest first, each with its attempts. */
  async deliveries(organizationId: string, id: string, query: { limit?: number; cursor?: string; status?: WebhookDeliveryStatus }): Promise<WebhookDeliveries> {
    const limit = query.limit ?? 20;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    await this.get(organizationId, id);
    let select = this.deps.db
      .selectFrom('webhook_delivery as d')
      .innerJoin('webhook_message as m', 'm.id', 'd.message_id')
      .select(['d.id', 'd.seq', 'd.message_id', 'm.type', 'd.status', 'd.next_attempt_at', 'd.created_at'])
      .where('d.endpoint_id', '=', id);
    if (query.status) select = select.where('d.status', '=', query.status);
    if (after !== undefined) select = select.where('d.seq', '<', sql<string>`${after}::bigint`);
    const rows = await select
      .orderBy('d.seq', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const attempts =
      page.length === 0
        ? []
        : await this.deps.db
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
   * Attempts a delivery once more, now. A failed (or succeeded) one becomes pending for that one
   * attempt: if it fails, the delivery is failed again, with no further retries. A pending one
   * is attempted now and keeps its schedule. 409 when the endpoint is disabled.
   */
  async retry(organizationId: string, webhookId: string, deliveryId: string): Promise<{ 'delivery-id': string }> {
    const endpoint = await this.deps.db
      .selectFrom('webhook_endpoint')
      .select(['enabled'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', webhookId)
      .executeTakeFirst();
    if (!endpoint) throw notFound('No such webhook endpoint', { 'webhook-id': webhookId });
    if (!endpoint.enabled) throw conflict('The endpoint is disabled: enable it first', { reason: 'webhook-disabled' });
    await this.countManualSend(organizationId);
    const { rows } = await sql<{ id: string }>`
      with retried as (
        update webhook_delivery
        set manual = case when status = 'pending' then manual else true end, status = 'pending', next_attempt_at = now(), completed_at = null
        where id = ${deliveryId} and endpoint_id = ${webhookId}
        returning id
      )
      select retried.id, pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from retried`.execute(this.deps.db);
    if (rows.length === 0) throw notFound('No such delivery', { 'delivery-id': deliveryId });
    this.deps.log.info('webhooks/retry-requested', 'Webhook delivery retry requested', {
      'organization-id': organizationId,
      'webhook-id': webhookId,
      'delivery-id': deliveryId,
    });
    return { 'delivery-id': deliveryId };
  }

  /** 429 (Retry-After) past the organization's manual sends: each is an attempt the worker makes now, beside the due ones. */
  private async countManualSend(organizationId: string): Promise<void> {
    if (this.deps.manualLimiter) await take(this.deps.manualLimiter, organizationId);
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
