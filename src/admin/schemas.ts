/** Named schemas of platform administration (docs/admin.md). */
import { Type, type Static } from 'typebox';
import { ExportedAuditEntry } from '../audit/schemas.js';
import { ref } from '../http/routes.js';

const Uuid = Type.String({ format: 'uuid' });
const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);
const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` (with the same `q`) for the next page; null on the last page' });
const Status = Type.Union([Type.Literal('none'), Type.Literal('trialing'), Type.Literal('active'), Type.Literal('past-due'), Type.Literal('canceled')]);

const accountProperties = {
  id: Uuid,
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  'created-at': Time,
  'email-verified': Type.Boolean(),
  locked: Type.Boolean({ description: 'a platform admin locked it: no sign-in works' }),
  'two-factor-enabled': Type.Boolean(),
  'last-seen-at': Type.Union([Time, Type.Null()], { description: 'the latest log-in or refresh of its own sessions (impersonations not counted)' }),
};

export const AdminAccount = Type.Object(accountProperties, { $id: 'admin-account', additionalProperties: false });
export type AdminAccount = Static<typeof AdminAccount>;

export const AdminAccountPage = Type.Object(
  { accounts: Type.Array(ref(AdminAccount)), 'next-cursor': NextCursor },
  { $id: 'admin-account-page', additionalProperties: false },
);
export type AdminAccountPage = Static<typeof AdminAccountPage>;

export const AdminAccountDetail = Type.Object(
  {
    ...accountProperties,
    'platform-admin': Type.Boolean(),
    'locked-at': NullableTime,
    'locked-reason': Type.Union([Type.String(), Type.Null()]),
    subscription: Type.Object(
      { status: Status, plan: Type.Union([Type.String(), Type.Null()]), 'current-period-end': NullableTime },
      { additionalProperties: false, description: 'of its personal organization' },
    ),
    organizations: Type.Array(
      Type.Object(
        {
          id: Uuid,
          name: Type.String(),
          slug: Type.String(),
          personal: Type.Boolean(),
          role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
          subscription: Type.Object({ status: Status, plan: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
        },
        { additionalProperties: false },
      ),
      { description: 'the organizations it belongs to, with its role, personal one first' },
    ),
    'session-count': Type.Integer({ minimum: 0, description: 'its live sessions (not ended, not expired)' }),
    identities: Type.Array(
      Type.Object(
        { provider: Type.String(), email: Type.Union([Type.String(), Type.Null()]), 'created-at': Time, 'last-used-at': NullableTime },
        { additionalProperties: false },
      ),
      { description: 'the sign-in providers linked to it' },
    ),
  },
  { $id: 'admin-account-detail', additionalProperties: false },
);
export type AdminAccountDetail = Static<typeof AdminAccountDetail>;

const pageQuery = {
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'a prefix, compared case-insensitively' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1200, description: '`next-cursor` of the previous page' })),
};

export const AccountSearch = Type.Object(pageQuery, {
  additionalProperties: false,
  description: 'With `q`: accounts whose email starts with it, by email, then those whose name starts with it, by name. Without: newest first.',
});
export type AccountSearch = Static<typeof AccountSearch>;

export const OrgSearch = Type.Object(pageQuery, {
  additionalProperties: false,
  description: 'With `q`: organizations whose name starts with it, by name, then those whose slug starts with it, by slug. Without: newest first.',
});
export type OrgSearch = Static<typeof OrgSearch>;

export const AdminOrganization = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    personal: Type.Boolean(),
    'created-at': Time,
    'member-count': Type.Integer({ minimum: 0 }),
    subscription: Type.Object(
      { status: Status, plan: Type.Union([Type.String(), Type.Null()]), 'current-period-end': NullableTime, 'cancel-at-period-end': Type.Boolean() },
      { additionalProperties: false },
    ),
  },
  { $id: 'admin-organization', additionalProperties: false },
);
export type AdminOrganization = Static<typeof AdminOrganization>;

export const AdminOrganizationPage = Type.Object(
  { organizations: Type.Array(ref(AdminOrganization)), 'next-cursor': NextCursor },
  { $id: 'admin-organization-page', additionalProperties: false },
);
export type AdminOrganizationPage = Static<typeof AdminOrganizationPage>;

export const AdminStats = Type.Object(
  {
    accounts: Type.Integer({ minimum: 0 }),
    'verified-accounts': Type.Integer({ minimum: 0 }),
    organizations: Type.Integer({ minimum: 0 }),
    subscriptions: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'live subscriptions (active, trialing or past-due) per plan',
    }),
    'sign-ups-7d': Type.Integer({ minimum: 0 }),
    'sign-ups-30d': Type.Integer({ minimum: 0 }),
  },
  { $id: 'admin-stats', additionalProperties: false },
);
export type AdminStats = Static<typeof AdminStats>;

const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'why; kept in the audit log' });

export const LockRequest = Type.Object({ reason: Reason }, { $id: 'lock-account', additionalProperties: false });
export const UnlockRequest = Type.Object({ reason: Type.Optional(Reason) }, { $id: 'unlock-account', additionalProperties: false });
export const ImpersonateRequest = Type.Object({ reason: Reason }, { $id: 'impersonate-account', additionalProperties: false });

export const AdminAuditQuery = Type.Object(
  {
    'account-id': Type.Optional(Type.String({ format: 'uuid', description: 'only the entries about this account' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next-cursor` of the previous page' })),
  },
  { additionalProperties: false },
);
export type AdminAuditQuery = Static<typeof AdminAuditQuery>;

export const AdminAuditLogPage = Type.Object(
  {
    entries: Type.Array(ref(ExportedAuditEntry), {
      description: 'newest first: every admin action, and every change made in an impersonated session (`impersonated`); emails of every account named',
    }),
    'next-cursor': Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'admin-audit-log-page', additionalProperties: false },
);
export type AdminAuditLogPage = Static<typeof AdminAuditLogPage>;

export const AccountPath = Type.Object({ id: Uuid }, { additionalProperties: false });

/** Embedded ones first (see system.ts). */
export const ADMIN_SCHEMAS = [
  AdminAccount,
  AdminAccountPage,
  AdminAccountDetail,
  AdminOrganization,
  AdminOrganizationPage,
  AdminStats,
  LockRequest,
  UnlockRequest,
  ImpersonateRequest,
  AdminAuditLogPage,
];
