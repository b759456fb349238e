/**
 * The organization routes, as data (docs/api.md, "Organizations"). `orgRole` names the role the
 * caller needs in the organization `:id`: the route layer answers 404 (not a member, or no such
 * organization) and 403 (a lower role) before a handler runs. `apiKeys` marks
 * the routes an API key of the organization may call: those whose handlers need no person (the
 * member and invitation changes read the caller's own account: people only, for now).
 */
import { originOf } from '../audit/log.js';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type MembershipResolver, type RouteGroup, requireUser } from '../http/routes.js';
import type { InvitationService } from './invitations.js';
import type { MemberService } from './members-service.js';
import {
  AcceptInvitation,
  CreateInvitation,
  CreateOrganization,
  Invitation,
  InvitationPath,
  Invitations,
  Member,
  MemberPath,
  Members,
  OrgId,
  Organization,
  Organizations,
  UpdateMember,
  UpdateOrganization,
} from './schemas.js';
import type { OrganizationService } from './service.js';

const error = ref(ErrorBody);
/** set on every `orgRole` route by the route layer */
const requireMembership = <M>(membership: M | undefined): M => {
  if (!membership) throw new Error('orgRole route without a membership');
  return membership;
};

export function orgRoutes(orgs: OrganizationService, members: MemberService, invitations: InvitationService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Organizations'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/orgs',
        scopes: ['orgs:write'],
        summary: 'Create an organization',
        tool: {
          name: 'create-organization',
          title: 'Create an organization',
          description: 'Creates a shared organization with the person as its owner; without a slug, one is made from the name.',
        },
        description: 'A shared organization with the caller as its owner. Without `slug`, one is made from the name; 409 when a given slug is taken.',
        schemas: { body: ref(CreateOrganization), response: { 201: ref(Organization), 409: error } },
        handler: ({ parameters, user, request }) => orgs.create(requireUser(user), parameters.body, originOf(request)),
      }),
      route({
        method: 'GET',
        path: '/orgs',
        scopes: ['orgs:read'],
        summary: "The caller's organizations",
        tool: {
          name: 'list-organizations',
          title: 'List organizations',
          description: 'The organizations the person belongs to, with their role in each; the personal one first.',
        },
        description: "Every organization the caller belongs to, with the caller's `role`; the personal one first.",
        schemas: { response: { 200: ref(Organizations) } },
        handler: ({ user }) => orgs.list(requireUser(user)),
      }),
      route({
        method: 'GET',
        path: '/orgs/:id',
        scopes: ['orgs:read'],
        summary: 'An organization',
        tool: {
          name: 'get-organization',
          title: 'Get an organization',
          description: 'One organization: its name, slug, the caller’s role and its subscription.',
        },
        orgRole: 'member',
        apiKeys: true,
        schemas: { params: OrgId, response: { 200: ref(Organization) } },
        handler: ({ membership }) => orgs.get(requireMembership(membership)),
      }),
      route({
        method: 'PATCH',
        path: '/orgs/:id',
        scopes: ['orgs:write'],
        summary: 'Rename an organization',
        tool: {
          name: 'rename-organization',
          title: 'Rename an organization',
          description: 'Sets the name and/or the slug of an organization (admins and owners); fails when the slug is taken.',
        },
        description: 'Sets the name and/or the slug; 409 when the slug is taken.',
        orgRole: 'admin',
        apiKeys: true,
        schemas: { params: OrgId, body: ref(UpdateOrganization), response: { 200: ref(Organization), 409: error } },
        handler: ({ parameters, membership, request }) => orgs.update(requireMembership(membership), parameters.body, originOf(request)),
      }),
      route({
        method: 'DELETE',
        path: '/orgs/:id',
        summary: 'Delete an organization',
        description:
          'Deletes the organization, its memberships and invitations. A personal organization cannot be deleted (409). ' +
          'A running subscription is canceled in Stripe first (502 `payment-provider-error` when Stripe fails: nothing is deleted).',
        orgRole: 'owner',
        schemas: { params: OrgId, response: { 204: null, 409: error, 502: error } },
        async handler({ membership, request }) {
          await orgs.delete(requireMembership(membership), originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'GET',
        path: '/orgs/:id/members',
        scopes: ['orgs:read'],
        summary: 'The members of an organization',
        tool: { name: 'list-members', title: 'List members', description: 'The members of an organization with their roles, in the order they joined.' },
        description: 'Members with their roles, in the order they joined.',
        orgRole: 'member',
        apiKeys: true,
        schemas: { params: OrgId, response: { 200: ref(Members) } },
        handler: ({ membership }) => members.list(requireMembership(membership).organizationId),
      }),
      route({
        method: 'PATCH',
        path: '/orgs/:id/members/:accountId',
        summary: "Change a member's role",
        description:
          'Admins change the roles of admins and members; making or unmaking an owner needs the role `owner` (403). ' +
          '409 when it would leave the organization without an owner. 404 when the account is not a member.',
        orgRole: 'admin',
        schemas: { params: MemberPath, body: ref(UpdateMember), response: { 200: ref(Member), 409: error } },
        handler: ({ parameters, membership, request }) =>
          members.update(requireMembership(membership), parameters.path.accountId, parameters.body.role, originOf(request)),
      }),
      route({
        method: 'DELETE',
        path: '/orgs/:id/members/:accountId',
        summary: 'Remove a member, or leave',
        description:
          'A member may remove itself (leave). Removing another member needs the role `admin`, removing an owner the role `owner` (403). ' +
          '409 when the last owner would leave or be removed. 404 when the account is not a member.',
        orgRole: 'member',
        schemas: { params: MemberPath, response: { 204: null, 409: error } },
        async handler({ parameters, membership, request }) {
          await members.remove(requireMembership(membership), parameters.path.accountId, originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/orgs/:id/invitations',
        summary: 'Invite someone by email',
        description:
          'Emails a link to accept the invitation (7 days, single use). `role` defaults to `member`; inviting an owner needs the role `owner` (403). ' +
          '409 when the address belongs to a member or has a pending invitation. ' +
          "402 `seat-limit` (with `limit`, `used`, `upgrade-url`) when one more seat would pass the plan's seat cap: nothing is created.",
        orgRole: 'admin',
        // an admin's second address invited as admin keeps acting for the organization after the impersonation
        impersonation: { forbiddenWhen: { field: 'role', values: ['admin', 'owner'] } },
        schemas: { params: OrgId, body: ref(CreateInvitation), response: { 201: ref(Invitation), 402: error, 409: error } },
        handler: ({ parameters, membership, request }) => invitations.invite(requireMembership(membership), parameters.body, originOf(request)),
      }),
      route({
        method: 'GET',
        path: '/orgs/:id/invitations',
        summary: 'Pending invitations',
        description: 'Invitations neither accepted, revoked nor expired, newest first.',
        orgRole: 'admin',
        apiKeys: true,
        schemas: { params: OrgId, response: { 200: ref(Invitations) } },
        handler: ({ membership }) => invitations.list(requireMembership(membership).organizationId),
      }),
      route({
        method: 'DELETE',
        path: '/orgs/:id/invitations/:invitationId',
        summary: 'Revoke an invitation',
        description: 'Its link stops working at once. 404 when it is not a pending invitation of this organization.',
        orgRole: 'admin',
        schemas: { params: InvitationPath, response: { 204: null } },
        async handler({ parameters, membership, request }) {
          await invitations.revoke(requireMembership(membership), parameters.path.invitationId, originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/invitations/accept',
        summary: 'Accept an invitation',
        description:
          'Takes the token of the emailed link and makes the caller a member with the invited role. ' +
          "The caller's email must be the invited address and verified (403, reason `email-mismatch` or `email-unverified`). " +
          '400 `invalid-token` when the token is unknown, used, revoked or expired.',
        schemas: { body: ref(AcceptInvitation), response: { 200: ref(Organization), 400: error, 403: error } },
        handler: ({ parameters, user, request }) => invitations.accept(requireUser(user), parameters.body.token, originOf(request)),
      }),
    ],
  };
}
