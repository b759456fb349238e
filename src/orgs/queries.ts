/** Query kinds of the organizations module: `orgs/list` and `orgs/members` (membership checked like the routes). */
import { Type } from 'typebox';
import { notFound, unauthorized } from '../http/errors.js';
import type { MembershipResolver } from '../http/routes.js';
import { queryKind } from '../query/registry.js';
import { Members, Organizations } from './schemas.js';
import type { OrganizationService } from './service.js';

export function orgQueries(orgs: OrganizationService, memberships: MembershipResolver) {
  return [
    queryKind({
      kind: 'orgs/list',
      summary: 'The caller\'s organizations, with its role in each',
      auth: 'required',
      params: Type.Object({}, { additionalProperties: false }),
      result: Organizations,
      async run({ user }) {
        if (!user) throw unauthorized();
        return orgs.list(user);
      },
    }),
    queryKind({
      kind: 'orgs/members',
      summary: 'The members of an organization the caller belongs to (404 otherwise)',
      auth: 'required',
      params: Type.Object({ 'org-id': Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
      result: Members,
      async run({ user, params }) {
        if (!user) throw unauthorized();
        const membership = await memberships(params['org-id'], user.id);
        if (!membership) throw notFound('No such organization');
        return orgs.members(membership.organizationId);
      },
    }),
  ];
}
