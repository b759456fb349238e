/**
 * An organization's sample items (docs/sample-items.md): read by its members, written by the
 * write role. Each change, its audit entry and its webhook event commit in one transaction, so
 * a change that rolls back leaves no trace and one that commits is never without them.
 *
 * The business rules of sample items belong here: check an input against the organization's
 * other items before writing, refuse with `requestCoercion` (a field's fault) or `conflict`.
 * A file field's file goes with the item (src/resources/table.ts): replaced, cleared or its item
 * deleted, the stored file is deleted in the change's transaction.
 */
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { notFound } from '../http/errors.js';
import type { Actor } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { ResourceTable, type ResourceInput, type ResourceItem } from '../resources/table.js';
import type { FileLinks } from '../storage/links.js';
import { emitWebhookEvent } from '../webhooks/module.js';
import { SAMPLE_ITEM_FIELDS } from './fields.js';

/** Who changes a sample item, where, and from where: an account or an API key of the organization. */
export interface SampleItemCaller {
  organizationId: string;
  actor: Actor;
  origin: RequestOrigin;
}

export interface SampleItemPage {
  'sample-items': ResourceItem[];
  'next-cursor': string | null;
}

export class SampleItemService {
  private readonly table: ResourceTable;

  /** `links`: the storage module's, for the signed links of file fields */
  constructor(private readonly deps: { db: DB; log: Logger; links: FileLinks }) {
    this.table = new ResourceTable('sample_item', SAMPLE_ITEM_FIELDS, { plural: 'sample-items', links: deps.links });
  }

  /** A page of the organization's sample items, newest first. */
  async list(organizationId: string, query: { limit: number; cursor?: string }): Promise<SampleItemPage> {
    const page = await this.table.page(this.deps.db, organizationId, query.limit, query.cursor);
    return { 'sample-items': page.items, 'next-cursor': page.nextCursor };
  }

  /** One sample item of the organization; 404 for any other id. */
  async get(organizationId: string, id: string): Promise<ResourceItem> {
    return (await this.table.find(this.deps.db, organizationId, id)) ?? missing(id);
  }

  async create(caller: SampleItemCaller, input: ResourceInput): Promise<ResourceItem> {
    const item = await this.deps.db.transaction().execute(async (trx) => {
      const created = await this.table.insert(trx, caller.organizationId, input);
      await this.audit(trx, caller, 'sample-item.created', created.id);
      await emitWebhookEvent(trx, caller.organizationId, 'sample-item.created', { 'sample-item': created });
      return created;
    });
    this.deps.log.info('sample-item/created', 'Sample item created', { 'organization-id': caller.organizationId, 'sample-item-id': item.id });
    return item;
  }

  /** Sets the given fields (`null` clears an optional one); the audit entry names them. */
  async update(caller: SampleItemCaller, id: string, changes: ResourceInput): Promise<ResourceItem> {
    return this.deps.db.transaction().execute(async (trx) => {
      const updated = (await this.table.update(trx, caller.organizationId, id, changes)) ?? missing(id);
      await this.audit(trx, caller, 'sample-item.updated', id, { fields: Object.keys(changes).join(',') });
      await emitWebhookEvent(trx, caller.organizationId, 'sample-item.updated', { 'sample-item': updated });
      return updated;
    });
  }

  /** Deletes a sample item; the webhook event carries it as it was. */
  async delete(caller: SampleItemCaller, id: string): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const deleted = (await this.table.delete(trx, caller.organizationId, id)) ?? missing(id);
      await this.audit(trx, caller, 'sample-item.deleted', id);
      await emitWebhookEvent(trx, caller.organizationId, 'sample-item.deleted', { 'sample-item': deleted });
    });
    this.deps.log.info('sample-item/deleted', 'Sample item deleted', { 'organization-id': caller.organizationId, 'sample-item-id': id });
  }

  private audit(trx: DB, caller: SampleItemCaller, action: string, id: string, details?: Record<string, string>): Promise<void> {
    return appendAudit(trx, {
      action,
      organizationId: caller.organizationId,
      accountId: 'accountId' in caller.actor ? caller.actor.accountId : null,
      actor: caller.actor,
      target: { type: 'sample-item', id },
      details,
      origin: caller.origin,
    });
  }
}

function missing(id: string): never {
  throw notFound('No such sample item', { 'sample-item-id': id });
}
