/**
 * Organizations: list, create, get, rename, delete. Each change commits with its audit entry
 * (and webhook event) in one transaction. The members of an organization are
 * src/orgs/members-service.ts.
 */
import type { Transaction } from 'kysely';
import { appendAudit, appendAccountAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import { conflict, notFound } from '../http/errors.js';
import type { AuthUser, Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { orgEntry } from './audit-entry.js';
import {
  ORGANIZATION_COLUMNS,
  ORGANIZATION_ROW_COLUMNS,
  organizationSubscription,
  slugify,
  suffixedSlug,
  toOrganization,
  type BeforeOrganizationsDeleted,
  type OrganizationColumns,
} from './data.js';
import type { OrganizationShaping } from './organization-shaping.js';
import type { CreateOrganization, Organization, Organizations, UpdateOrganization } from './schemas.js';

type Trx = Transaction<DatabaseSchema>;

const slugTaken = () => conflict('This slug is taken', { field: 'slug' });
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export class OrganizationService {
  constructor(
    private readonly db: DB,
    private readonly log: Logger,
    private readonly shaping: OrganizationShaping,
    private readonly beforeDelete?: BeforeOrganizationsDeleted,
  ) {}

  async list(user: AuthUser): Promise<Organizations> {
    const rows = await this.db
      .selectFrom('membership')
      .innerJoin('organization', 'organization.id', 'membership.organization_id')
      .select([...ORGANIZATION_COLUMNS, 'membership.role'])
      .where('membership.account_id', '=', user.id)
      // a membership a directory suspended (SCIM `active: false`) grants nothing, not even a place in the list
      .where('membership.suspended_at', 'is', null)
      .orderBy('organization.personal', 'desc')
      .orderBy('organization.name')
      .orderBy('organization.id')
      .execute();
    return { organizations: rows.map((r) => toOrganization(r, r.role, this.shaping)) };
  }

  /** A shared organization with the caller as owner; without a slug, one is made from the name. */
  async create(user: AuthUser, input: CreateOrganization, origin: RequestOrigin): Promise<Organization> {
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        const inserted = await this.insertWithSlug(trx, input.name.trim(), input.slug);
        await trx.insertInto('membership').values({ organization_id: inserted.id, account_id: user.id, role: 'owner' }).execute();
        await appendAudit(
          trx,
          orgEntry(inserted.id, user.id, {
            action: 'org.created',
            target: { type: 'organization', id: inserted.id },
            details: { name: inserted.name, slug: inserted.slug },
            origin,
          }),
        );
        return inserted;
      });
      this.log.info('orgs/created', 'Organization created', { 'organization-id': row.id, 'account-id': user.id });
      return toOrganization(row, 'owner', this.shaping);
    } catch (err) {
      if (isUniqueViolation(err)) throw slugTaken();
      throw err;
    }
  }

  private async insertWithSlug(trx: Trx, name: string, slug: string | undefined): Promise<OrganizationColumns> {
    const candidates = slug ? [slug] : [slugify(name), ...Array.from({ length: 4 }, () => suffixedSlug(slugify(name)))];
    for (const candidate of candidates) {
      // `on conflict do nothing`: a taken slug must not abort the transaction
      const row = await trx
        .insertInto('organization')
        .values({ name, slug: candidate })
        .onConflict((oc) => oc.column('slug').doNothing())
        .returning(ORGANIZATION_ROW_COLUMNS)
        .executeTakeFirst();
      if (row) return row;
    }
    throw slugTaken();
  }

  async get(membership: Membership): Promise<Organization> {
    const row = await this.db.selectFrom('organization').select(ORGANIZATION_COLUMNS).where('id', '=', membership.organizationId).executeTakeFirst();
    if (!row) throw notFound('No such organization');
    return toOrganization(row, membership.role, this.shaping);
  }

  /** Renames; recorded (`org.renamed`) when the name or the slug changed. */
  async update(membership: Membership, input: UpdateOrganization, origin: RequestOrigin): Promise<Organization> {
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        const before = await trx.selectFrom('organization').select(['name', 'slug']).where('id', '=', membership.organizationId).forUpdate().executeTakeFirst();
        if (!before) throw notFound('No such organization');
        const after = await trx
          .updateTable('organization')
          .set({ ...(input.name !== undefined ? { name: input.name.trim() } : {}), ...(input.slug !== undefined ? { slug: input.slug } : {}) })
          .where('id', '=', membership.organizationId)
          .returning(ORGANIZATION_ROW_COLUMNS)
          .executeTakeFirstOrThrow();
        if (after.name !== before.name || after.slug !== before.slug) {
          await appendAudit(
            trx,
            orgEntry(after.id, membership, {
              action: 'org.renamed',
              target: { type: 'organization', id: after.id },
              details: { name: after.name, slug: after.slug, 'previous-name': before.name, 'previous-slug': before.slug },
              origin,
            }),
          );
          await emitWebhookEvent(trx, after.id, 'organization.updated', { organization: webhookOrganization(after) });
        }
        return after;
      });
      return toOrganization(row, membership.role, this.shaping);
    } catch (err) {
      if (isUniqueViolation(err)) throw slugTaken();
      throw err;
    }
  }

  /**
   * Deletes a shared organization. Its audit log goes with it (the cascade), so the deletion is
   * recorded in the caller's personal organization's log, and the caller's export.
   */
  async delete(membership: Membership, origin: RequestOrigin): Promise<void> {
    const found = await this.db.selectFrom('organization').select(['personal']).where('id', '=', membership.organizationId).executeTakeFirst();
    if (!found) throw notFound('No such organization');
    if (found.personal) throw conflict('A personal organization cannot be deleted; it goes with the account', { reason: 'personal' });
    // a running subscription is canceled in Stripe first: when that fails, nothing is deleted
    await this.beforeDelete?.([membership.organizationId]);
    await this.db.transaction().execute(async (trx) => {
      const org = await trx
        .selectFrom('organization')
        .select(['name', 'slug', 'personal'])
        .where('id', '=', membership.organizationId)
        .forUpdate()
        .executeTakeFirst();
      if (!org) throw notFound('No such organization');
      if (org.personal) throw conflict('A personal organization cannot be deleted; it goes with the account', { reason: 'personal' });
      // cascades: memberships, invitations, the organization's audit log
      await trx.deleteFrom('organization').where('id', '=', membership.organizationId).where('personal', '=', false).execute();
      await appendAccountAudit(trx, {
        action: 'org.deleted',
        accountId: membership.accountId,
        target: { type: 'organization', id: membership.organizationId },
        details: { name: org.name, slug: org.slug },
        origin,
      });
    });
    this.log.info('orgs/deleted', 'Organization deleted', { 'organization-id': membership.organizationId, 'account-id': membership.accountId });
  }
}

/**
 * The organization as webhook events carry it: the API's shape without `role` (which is a
 * caller's) and without `logo` (its signed links would expire before a retried delivery is read).
 */
function webhookOrganization(row: OrganizationColumns): Omit<Organization, 'role' | 'logo'> {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    personal: row.personal,
    'created-at': new Date(row.created_at).toISOString(),
    subscription: organizationSubscription(row),
  };
}
