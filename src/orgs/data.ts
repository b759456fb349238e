/**
 * What other modules need from organizations without the service: the personal organization
 * made in the sign-up transaction, the membership lookup of `orgRole` routes, the shapes, and
 * the memberships in the account export.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DatabaseSchema, OrganizationTable } from '../db/schema.js';
import { conflict, type HttpError, type Words } from '../http/errors.js';
import type { MembershipResolver, OrgRole } from '../http/routes.js';
import type { Selectable } from 'kysely';
import type { OrganizationShaping } from './organization-shaping.js';
import type { ExportedMembership, Member, Organization } from './schemas.js';

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** The columns of the `organization` shape, as a statement on the organization alone names them. */
export const ORGANIZATION_ROW_COLUMNS = [
  'id',
  'name',
  'slug',
  'personal',
  'created_at',
  'subscription_status',
  'subscription_plan',
  'subscription_period_end',
  'subscription_cancel_at_period_end',
  'billing_customer_id',
  'logo_file_id',
] as const;
/** The same, qualified, for statements that join memberships. */
export const ORGANIZATION_COLUMNS = ORGANIZATION_ROW_COLUMNS.map((c) => `organization.${c}` as const);
export type OrganizationColumns = Pick<Selectable<OrganizationTable>, (typeof ORGANIZATION_ROW_COLUMNS)[number]>;

/** The API's shape of an organization, for a caller of `role`; `shaping` makes the logo's links. */
export function toOrganization(row: OrganizationColumns, role: OrgRole, shaping: OrganizationShaping): Organization {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    personal: row.personal,
    'created-at': new Date(row.created_at).toISOString(),
    role,
    logo: shaping.imageOf(row.logo_file_id),
    subscription: organizationSubscription(row),
  };
}

/** The organization's subscription as its API shape and its webhook events carry it. */
export function organizationSubscription(row: OrganizationColumns): Organization['subscription'] {
  return {
    status: row.subscription_status,
    plan: row.subscription_plan,
    'current-period-end': row.subscription_period_end ? new Date(row.subscription_period_end).toISOString() : null,
    'cancel-at-period-end': row.subscription_cancel_at_period_end,
    'has-customer': row.billing_customer_id !== null,
  };
}

/** The columns of a member's shape, on a statement joining `membership` and `account`. */
export const MEMBER_COLUMNS = ['account.id', 'account.email', 'account.name', 'account.avatar_file_id', 'membership.role', 'membership.joined_at'] as const;
export interface MemberColumns {
  id: string;
  email: string;
  name: string | null;
  avatar_file_id: string | null;
  role: OrgRole;
  joined_at: Date;
}

/** The API's shape of a member; `shaping` makes the avatar's links. */
export function toMember(r: MemberColumns, shaping: OrganizationShaping): Member {
  return {
    'account-id': r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    'joined-at': new Date(r.joined_at).toISOString(),
    avatar: shaping.imageOf(r.avatar_file_id),
  };
}

/**
 * A member as `member.*` webhook events carry it (docs/webhooks.md): without the avatar, whose
 * signed links would expire long before a retried delivery is read.
 */
export function webhookMember(member: Member): Omit<Member, 'avatar'> {
  const { avatar: _avatar, ...rest } = member;
  return rest;
}

/** The personal organization's slug: the account id's hex, so it is unique and the migration makes the same. */
export const personalSlug = (accountId: string) => `personal-${accountId.replace(/-/g, '')}`;

/** A slug from a name: lower-case ASCII letters and digits with inner hyphens; `org` when nothing is left. */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return base || 'org';
}

/** `slug-<6 hex>`, for a name whose plain slug is taken */
export const suffixedSlug = (slug: string) => `${slug}-${randomBytes(3).toString('hex')}`;

/**
 * Creates the account's personal organization with the account as owner; called in the sign-up
 * transaction (the owner check at commit needs both rows).
 */
export async function createPersonalOrganization(trx: Executor, account: { id: string; email: string; name: string | null }): Promise<string> {
  const org = await trx
    .insertInto('organization')
    .values({
      name: (account.name ?? account.email.split('@')[0]).slice(0, 100),
      slug: personalSlug(account.id),
      personal: true,
      personal_account_id: account.id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx.insertInto('membership').values({ organization_id: org.id, account_id: account.id, role: 'owner' }).execute();
  return org.id;
}

/**
 * 409 `reason: personal`: a personal organization has only its owner (no invitations, domains, SAML connection or SCIM tokens).
 * `message` is the whole message, "A personal organization has only its owner: <what to do instead>", marked where it is written.
 */
export function personalOrganization(message: Words): HttpError {
  return conflict(message, { reason: 'personal' });
}

/** Throws {@link personalOrganization} when the organization is an account's personal one. */
export async function refusePersonal(db: Executor, organizationId: string, message: Words): Promise<void> {
  const org = await db.selectFrom('organization').select('personal').where('id', '=', organizationId).executeTakeFirst();
  if (org?.personal) throw personalOrganization(message);
}

/** One query per request of an `orgRole` route. */
export function membershipResolver(db: Kysely<DatabaseSchema>): MembershipResolver {
  return async (organizationId, accountId) => {
    const row = await db
      .selectFrom('membership')
      .select(['role', 'joined_at'])
      .where('organization_id', '=', organizationId)
      .where('account_id', '=', accountId)
      // suspended by a directory (SCIM): the membership grants nothing
      .where('suspended_at', 'is', null)
      .executeTakeFirst();
    return row && { organizationId, accountId, role: row.role, joinedAt: row.joined_at };
  };
}

/**
 * The organizations an account alone owns: its deletion takes them along (migration 0007's
 * trigger makes the same choice), the personal one included.
 */
export async function solelyOwnedOrganizations(db: Executor, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('membership as m')
    .select('m.organization_id')
    .where('m.account_id', '=', accountId)
    .where('m.role', '=', 'owner')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('membership as other')
            .select('other.account_id')
            .whereRef('other.organization_id', '=', 'm.organization_id')
            .where('other.role', '=', 'owner')
            .whereRef('other.account_id', '<>', 'm.account_id'),
        ),
      ),
    )
    .execute();
  return rows.map((r) => r.organization_id);
}

/** Runs before organizations are deleted (billing cancels their subscriptions); throwing stops the deletion. */
export type BeforeOrganizationsDeleted = (organizationIds: readonly string[]) => Promise<void>;

/** The account's memberships for its export (GDPR access). */
export async function exportMemberships(db: Executor, accountId: string): Promise<ExportedMembership[]> {
  const rows = await db
    .selectFrom('membership')
    .innerJoin('organization', 'organization.id', 'membership.organization_id')
    .select(['organization.id', 'organization.name', 'organization.personal', 'membership.role', 'membership.joined_at'])
    .where('membership.account_id', '=', accountId)
    .orderBy('membership.joined_at')
    .execute();
  return rows.map((r) => ({
    'organization-id': r.id,
    organization: r.name,
    personal: r.personal,
    role: r.role,
    'joined-at': r.joined_at.toISOString(),
  }));
}

/** Who may grant a role by invitation: an admin invites members and admins, an owner invites owners too. */
export function roleNeededToInvite(role: OrgRole): OrgRole {
  return role === 'owner' ? 'owner' : 'admin';
}

/** The roles of invitations a member with `role` may no longer have pending (none for an admin's or owner's own grants). */
export function invitationRolesBeyond(role: OrgRole | undefined): OrgRole[] {
  if (role === 'owner') return [];
  if (role === 'admin') return ['owner'];
  return ['owner', 'admin', 'member'];
}

/**
 * Revokes, in `trx`, the pending invitations `inviterId` sent (in one organization, or in every
 * one) whose role is among `roles`: what an inviter removed from an organization, demoted, or
 * deleted may no longer grant. Answers the revoked rows, for their audit entries.
 */
export async function revokeInvitationsSentBy(
  trx: Executor,
  inviterId: string,
  roles: readonly OrgRole[],
  organizationId?: string,
): Promise<Array<{ id: string; organization_id: string; email: string; role: OrgRole }>> {
  if (roles.length === 0) return [];
  let query = trx
    .updateTable('invitation')
    .set({ revoked_at: sql`now()` })
    .where('invited_by', '=', inviterId)
    .where('role', 'in', [...roles])
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null);
  if (organizationId) query = query.where('organization_id', '=', organizationId);
  return query.returning(['id', 'organization_id', 'email', 'role']).execute();
}

/** The owner rule broken at commit (migration 0007's trigger): a race the service's own check could not see. */
export function isOwnerRuleViolation(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; message?: string };
  return e.code === '23514' && (e.constraint === 'organization_has_owner' || /would have no owner/.test(e.message ?? ''));
}

/**
 * Where an organization's notices go (a webhook endpoint disabled, a usage threshold reached):
 * its owners' and admins' addresses, in order. A member the directory suspended gets nothing of
 * the organization, its mail included.
 */
export async function administratorEmails(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('membership')
    .innerJoin('account', 'account.id', 'membership.account_id')
    .select('account.email')
    .where('membership.organization_id', '=', organizationId)
    .where('membership.role', 'in', ['owner', 'admin'])
    .where('membership.suspended_at', 'is', null)
    .orderBy('account.email')
    .execute();
  return rows.map((r) => r.email);
}
