/**
 * The example of a paid feature (docs/billing.md, "Gating a route"): an organization's usage
 * report, open to its members while the organization subscribes to `pro` or `team`. The gate
 * is route data (`requires`); the handler does not check plans itself.
 */
import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../db/database.js';
import { unauthorized } from '../http/errors.js';
import { ref, route, type MembershipResolver, type RouteGroup, type FeatureResolver } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';

/** The feature the usage report is, and the BILLING_PLANS plans that have it (a catalogue lists it in its plans' `features`). */
export const USAGE_REPORT_FEATURE = 'usage-report';
export const USAGE_REPORT_PLANS = ['pro', 'team'];
const WINDOW_DAYS = 30;

const Count = Type.Integer({ minimum: 0 });

export const UsageReport = Type.Object(
  {
    'organization-id': Type.String({ format: 'uuid' }),
    'generated-at': Type.String({ format: 'date-time' }),
    'window-days': Type.Integer({ description: 'the "recent" counts cover this many days up to `generated-at`' }),
    members: Type.Object({ total: Count, owners: Count, admins: Count, members: Count, 'joined-recently': Count }, { additionalProperties: false }),
    invitations: Type.Object({ pending: Count, 'accepted-recently': Count }, { additionalProperties: false }),
    'payment-events-recently': Count,
  },
  { $id: 'usage-report', additionalProperties: false },
);
export type UsageReport = Static<typeof UsageReport>;

/** Counts of one organization, in one statement. */
export async function usageReport(db: DB, organizationId: string): Promise<UsageReport> {
  const since = sql<Date>`now() - make_interval(days => ${WINDOW_DAYS})`;
  const row = await db
    .selectNoFrom((eb) => [
      sql<Date>`now()`.as('now'),
      eb
        .selectFrom('membership')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .as('total'),
      eb
        .selectFrom('membership')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('role', '=', 'owner')
        .as('owners'),
      eb
        .selectFrom('membership')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('role', '=', 'admin')
        .as('admins'),
      eb
        .selectFrom('membership')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('role', '=', 'member')
        .as('plain'),
      eb
        .selectFrom('membership')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('joined_at', '>', since)
        .as('joined'),
      eb
        .selectFrom('invitation')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .as('pending'),
      eb
        .selectFrom('invitation')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('accepted_at', '>', since)
        .as('accepted'),
      eb
        .selectFrom('payment_event')
        .select((m) => m.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('created_at', '>', since)
        .as('payments'),
    ])
    .executeTakeFirstOrThrow();
  const n = (v: unknown) => Number(v ?? 0);
  return {
    'organization-id': organizationId,
    'generated-at': new Date(row.now).toISOString(),
    'window-days': WINDOW_DAYS,
    members: { total: n(row.total), owners: n(row.owners), admins: n(row.admins), members: n(row.plain), 'joined-recently': n(row.joined) },
    invitations: { pending: n(row.pending), 'accepted-recently': n(row.accepted) },
    'payment-events-recently': n(row.payments),
  };
}

export function reportRoutes(db: DB, memberships: MembershipResolver, features: FeatureResolver): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Reports'],
    memberships,
    features,
    routes: [
      route({
        method: 'GET',
        path: '/orgs/:id/reports/usage',
        summary: "The organization's usage report",
        description:
          `Members by role, invitations and payment events of the last ${WINDOW_DAYS} days. The example of a paid feature: ` +
          'the feature it needs is route data (`requires: {feature}`): the plans of the catalogue that list `usage-report` open it ' +
          '(with BILLING_PLANS, the plans `pro` and `team`).',
        orgRole: 'member',
        requires: { feature: USAGE_REPORT_FEATURE },
        scopes: ['orgs:read'],
        tool: {
          name: 'get-usage-report',
          title: 'Get the usage report',
          description: `An organization's members by role, invitations and payment events of the last ${WINDOW_DAYS} days (a paid feature).`,
        },
        schemas: { params: OrgId, response: { 200: ref(UsageReport) } },
        handler: ({ membership }) => {
          if (!membership) throw unauthorized();
          return usageReport(db, membership.organizationId);
        },
      }),
    ],
  };
}
