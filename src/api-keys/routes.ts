/**
 * The API key routes of an organization, as data: admins (people) make, list and revoke keys.
 * `apiKeys` stays off here: a key cannot manage keys. See docs/api-keys.md.
 */
import type { FastifyRequest } from 'fastify';
import { ErrorBody, unauthorized } from '../http/errors.js';
import { ref, route, type AuthUser, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';
import { ApiKeyPath, ApiKeys, CreateApiKey, CreatedApiKey } from './schemas.js';
import type { ApiKeyRequest, ApiKeyService } from './service.js';

/** `orgRole` routes without `apiKeys` always have both: the route layer checked them */
function caller(request: FastifyRequest, user: AuthUser | undefined, membership: Membership | undefined): ApiKeyRequest {
  if (!user || !membership) throw unauthorized();
  return { request, user, membership };
}

export function apiKeyRoutes(keys: ApiKeyService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['API keys'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/:id/api-keys',
        impersonation: 'forbidden',
        summary: 'Create an API key',
        description:
          'A key for servers and scripts, acting in this organization with `role` (`admin` or `member`), sent as ' +
          '`Authorization: Bearer sk_…`. The answer carries the key (`key`) this once: only its hash is stored.',
        orgRole: 'admin',
        // a key outlives its maker's sessions: no key before the maker's address is proven
        verifiedEmail: true,
        schemas: { params: OrgId, body: ref(CreateApiKey), response: { 201: ref(CreatedApiKey) } },
        handler: ({ request, parameters, user, membership }) => keys.create(caller(request, user, membership), parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/api-keys',
        summary: "The organization's API keys",
        description: 'The live keys, newest first, without their secrets; `last-used-at` is recorded at most once a minute.',
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(ApiKeys) } },
        handler: ({ request, user, membership }) => keys.list(caller(request, user, membership).membership.organizationId),
      }),
      route({
        method: 'DELETE',
        path: '/:id/api-keys/:keyId',
        summary: 'Revoke an API key',
        description: 'The key is refused from this moment, on every instance. 404 when it is not a live key of this organization.',
        orgRole: 'admin',
        schemas: { params: ApiKeyPath, response: { 204: null, 404: ref(ErrorBody) } },
        async handler({ request, parameters, user, membership }) {
          await keys.revoke(caller(request, user, membership), parameters.path.keyId);
          return undefined;
        },
      }),
    ],
  };
}
