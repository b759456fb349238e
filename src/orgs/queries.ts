/** Query kinds of the organizations module: `orgs/list` and `orgs/members` (membership checked like the routes). */
import { Type } from 'typebox';
import { unauthorized } from '../http/errors.js';
import { queryKind } from '../http/queries.js';
import type { MemberService } from './members-service.js';
import { Members, Organizations } from './schemas.js';
import type { OrganizationService } from './service.js';

export function orgQueries(orgs: OrganizationService, members: MemberService) {
  return [
    queryKind({
      kind: 'orgs/list',
      scopes: ['orgs:read'],
      summary: "The caller's organizations, with its role in each",
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
      scopes: ['orgs:read'],
      summary: 'The members of an organization the caller belongs to (404 otherwise)',
      auth: 'required',
      orgRole: 'member',
      apiKeys: true,
      params: Type.Object({ 'org-id': Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
      result: Members,
      async run({ membership }) {
        return members.list(membership!.organizationId);
      },
    }),
  ];
}
