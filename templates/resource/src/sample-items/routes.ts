/**
 * The sample item routes of an organization, as data (docs/sample-items.md): its members read,
 * the write role (`admin`) writes; the organization's API keys act with their role, and OAuth
 * apps with the scopes `sample-items:read` and `sample-items:write` act for the person who
 * connected them (their role still applies). Each route is an MCP tool too (docs/mcp.md):
 * `list-sample-items`, `get-sample-item`, `create-sample-item`, `update-sample-item`,
 * `delete-sample-item`.
 */
import type { FastifyRequest } from 'fastify';
import { originOf } from '../audit/log.js';
import { ErrorBody, unauthorized } from '../http/errors.js';
import { ref, route, type Actor, type Membership, type MembershipResolver, type OrgRole, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/module.js';
import { PageQuery } from '../resources/schemas.js';
import { CreateSampleItem, SampleItem, SampleItemPath, SampleItems, UpdateSampleItem } from './schemas.js';
import type { SampleItemCaller, SampleItemService } from './service.js';

/** the role that creates, changes and deletes sample items */
export const SAMPLE_ITEM_WRITE_ROLE: OrgRole = 'admin';

const error = ref(ErrorBody);

/** `orgRole` routes have both: the route layer checked them */
function caller(request: FastifyRequest, membership: Membership | undefined, actor: Actor | undefined): SampleItemCaller {
  if (!membership || !actor) throw unauthorized();
  return { organizationId: membership.organizationId, actor, origin: originOf(request) };
}

const orgOf = (membership: Membership | undefined): string => {
  if (!membership) throw unauthorized();
  return membership.organizationId;
};

export function sampleItemRoutes(sampleItems: SampleItemService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['Sample items'],
    auth: 'required',
    bodyLimit: 128 * 1024,
    memberships,
    routes: [
      route({
        method: 'GET',
        path: '/:id/sample-items',
        summary: "The organization's sample items",
        description: 'Newest first, `limit` at a time (1..100, default 20); `cursor`: the `next-cursor` of the previous page.',
        orgRole: 'member',
        apiKeys: true,
        scopes: ['sample-items:read'],
        tool: {
          name: 'list-sample-items',
          title: 'List sample items',
          description:
            "The organization's sample items, newest first, `limit` at a time (1 to 100, default 20); for the next page, pass the answer's `next-cursor` as `cursor`.",
        },
        schemas: { params: OrgId, querystring: PageQuery, response: { 200: ref(SampleItems) } },
        handler: ({ parameters, membership }) => sampleItems.list(orgOf(membership), parameters.query),
      }),
      route({
        method: 'POST',
        path: '/:id/sample-items',
        summary: 'Create a sample item',
        orgRole: SAMPLE_ITEM_WRITE_ROLE,
        apiKeys: true,
        scopes: ['sample-items:write'],
        tool: {
          name: 'create-sample-item',
          title: 'Create a sample item',
          description: `Creates a sample item in the organization from the fields given and answers it with its id (the ${SAMPLE_ITEM_WRITE_ROLE} role or above).`,
        },
        schemas: { params: OrgId, body: ref(CreateSampleItem), response: { 201: ref(SampleItem) } },
        handler: ({ request, parameters, membership, actor }) => sampleItems.create(caller(request, membership, actor), parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/sample-items/:itemId',
        summary: 'A sample item',
        orgRole: 'member',
        apiKeys: true,
        scopes: ['sample-items:read'],
        tool: { name: 'get-sample-item', title: 'Get a sample item', description: 'One sample item of the organization, by its id (`itemId`).' },
        schemas: { params: SampleItemPath, response: { 200: ref(SampleItem), 404: error } },
        handler: ({ parameters, membership }) => sampleItems.get(orgOf(membership), parameters.path.itemId),
      }),
      route({
        method: 'PATCH',
        path: '/:id/sample-items/:itemId',
        summary: 'Change a sample item',
        description: 'Sets the fields sent (any non-empty subset); `null` clears an optional one.',
        orgRole: SAMPLE_ITEM_WRITE_ROLE,
        apiKeys: true,
        scopes: ['sample-items:write'],
        tool: {
          name: 'update-sample-item',
          title: 'Update a sample item',
          description: `Changes the fields given of one sample item (at least one; \`null\` clears an optional field) and answers the item (the ${SAMPLE_ITEM_WRITE_ROLE} role or above).`,
        },
        schemas: { params: SampleItemPath, body: ref(UpdateSampleItem), response: { 200: ref(SampleItem), 404: error } },
        handler: ({ request, parameters, membership, actor }) =>
          sampleItems.update(caller(request, membership, actor), parameters.path.itemId, parameters.body),
      }),
      route({
        method: 'DELETE',
        path: '/:id/sample-items/:itemId',
        summary: 'Delete a sample item',
        orgRole: SAMPLE_ITEM_WRITE_ROLE,
        apiKeys: true,
        scopes: ['sample-items:write'],
        tool: {
          name: 'delete-sample-item',
          title: 'Delete a sample item',
          description: `Deletes one sample item of the organization; this cannot be undone (the ${SAMPLE_ITEM_WRITE_ROLE} role or above).`,
        },
        schemas: { params: SampleItemPath, response: { 204: null, 404: error } },
        async handler({ request, parameters, membership, actor }) {
          await sampleItems.delete(caller(request, membership, actor), parameters.path.itemId);
          return undefined;
        },
      }),
    ],
  };
}
