/** Named schemas of the organization routes (docs/api.md, "Organizations"). */
import { Type, type Static } from 'typebox';
import { Email, ImageLinksSchema, Subscription } from '../account/schemas.js';
import { NOT_BLANK } from '../http/errors.js';

export const OrgRoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')], {
  description: 'owner > admin > member: each role can do what the ones below it can',
});

const Slug = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$',
  description: 'lower-case letters, digits and inner hyphens; unique',
});
/** stored trimmed (the service trims it); only spaces is no name */
const OrgName = Type.String({ minLength: 1, maxLength: 100, pattern: NOT_BLANK });

/** `user-account`'s subscription plus what billing pages need (docs/api.md, "Organizations"). */
export const OrganizationSubscription = Type.Object(
  {
    ...Subscription.properties,
    'cancel-at-period-end': Type.Boolean({ description: 'the subscription ends at `current-period-end` instead of renewing' }),
    'has-customer': Type.Boolean({ description: 'the organization has a Stripe customer (after its first checkout): the billing portal opens for it' }),
  },
  {
    $id: 'organization-subscription',
    additionalProperties: false,
    description: "`plan` is the plan's name (BILLING_PLANS), or the Stripe price id of a price no plan names",
  },
);

export const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    personal: Type.Boolean({ description: "the account's own organization, made at sign-up; it cannot be deleted" }),
    'created-at': Type.String({ format: 'date-time' }),
    role: OrgRoleSchema,
    logo: Type.Union([ImageLinksSchema, Type.Null()], { description: "the organization's logo, or null (docs/files.md)" }),
    subscription: OrganizationSubscription,
  },
  { $id: 'organization', additionalProperties: false, description: "`role` is the caller's" },
);
export type Organization = Static<typeof Organization>;

export const Organizations = Type.Object(
  { organizations: Type.Array(Organization, { description: 'the personal organization first, then by name' }) },
  { $id: 'organizations', additionalProperties: false },
);
export type Organizations = Static<typeof Organizations>;

export const CreateOrganization = Type.Object(
  { name: OrgName, slug: Type.Optional(Slug) },
  { $id: 'create-organization', additionalProperties: false, description: 'without `slug`, one is made from the name' },
);
export type CreateOrganization = Static<typeof CreateOrganization>;

export const UpdateOrganization = Type.Object(
  { name: Type.Optional(OrgName), slug: Type.Optional(Slug) },
  { $id: 'update-organization', additionalProperties: false, minProperties: 1 },
);
export type UpdateOrganization = Static<typeof UpdateOrganization>;

export const Member = Type.Object(
  {
    'account-id': Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    role: OrgRoleSchema,
    'joined-at': Type.String({ format: 'date-time' }),
    avatar: Type.Union([ImageLinksSchema, Type.Null()], { description: "the member's picture, or null (docs/files.md)" }),
    suspended: Type.Optional(Type.Boolean({ description: 'a directory (SCIM `active: false`) suspended the membership: it grants nothing' })),
  },
  { $id: 'member', additionalProperties: false },
);
export type Member = Static<typeof Member>;

export const Members = Type.Object({ members: Type.Array(Member) }, { $id: 'members', additionalProperties: false });
export type Members = Static<typeof Members>;

export const UpdateMember = Type.Object({ role: OrgRoleSchema }, { $id: 'update-member', additionalProperties: false });

export const CreateInvitation = Type.Object(
  { email: Email, role: Type.Optional(OrgRoleSchema) },
  { $id: 'create-invitation', additionalProperties: false, description: '`role` defaults to `member`; only an owner can invite an owner' },
);
export type CreateInvitation = Static<typeof CreateInvitation>;

export const Invitation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: OrgRoleSchema,
    'expires-at': Type.String({ format: 'date-time' }),
  },
  { $id: 'invitation', additionalProperties: false },
);
export type Invitation = Static<typeof Invitation>;

export const PendingInvitation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: OrgRoleSchema,
    'expires-at': Type.String({ format: 'date-time' }),
    'created-at': Type.String({ format: 'date-time' }),
    'invited-by': Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'the inviting account; null once it is deleted' }),
  },
  { $id: 'pending-invitation', additionalProperties: false },
);
export type PendingInvitation = Static<typeof PendingInvitation>;

export const Invitations = Type.Object(
  { invitations: Type.Array(PendingInvitation, { description: 'neither accepted, revoked nor expired; newest first' }) },
  { $id: 'invitations', additionalProperties: false },
);

export const AcceptInvitation = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200, description: 'the `token` query parameter of the emailed link' }) },
  { $id: 'accept-invitation', additionalProperties: false },
);

export const OrgId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
// camelCase: Fastify's router ends a path parameter's name at a hyphen (`:lat-:lng`)
export const MemberPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), accountId: Type.String({ format: 'uuid', description: "the member's account id" }) },
  { additionalProperties: false },
);
export const InvitationPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), invitationId: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

/** One organization the account belongs to, in its export. */
export const ExportedMembership = Type.Object(
  {
    'organization-id': Type.String({ format: 'uuid' }),
    organization: Type.String({ description: 'its name' }),
    personal: Type.Boolean(),
    role: OrgRoleSchema,
    'joined-at': Type.String({ format: 'date-time' }),
  },
  { $id: 'exported-membership', additionalProperties: false },
);
export type ExportedMembership = Static<typeof ExportedMembership>;

export const ORG_SCHEMAS = [
  OrganizationSubscription,
  Organization,
  Organizations,
  CreateOrganization,
  UpdateOrganization,
  Member,
  Members,
  UpdateMember,
  CreateInvitation,
  Invitation,
  PendingInvitation,
  Invitations,
  AcceptInvitation,
  ExportedMembership,
];
