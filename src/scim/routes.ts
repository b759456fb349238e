/**
 * SCIM 2.0 at `/scim/v2` (docs/sso.md) and the owners' token routes. The SCIM routes take a
 * directory's bearer token (not an access token), answer `application/scim+json` and SCIM's error
 * shape; the organization follows from the token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { originOf } from '../audit/log.js';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { take } from '../auth/rate-limit.js';
import { ErrorBody, HttpError, unauthorized } from '../http/errors.js';
import { ref, route, type Actor, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { OrgId } from '../orgs/module.js';
import type { DomainCaller } from '../sso/domains.js';
import { listOf, serviceProviderConfig, userResourceType, userSchema } from './discovery.js';
import { ScimHttpError } from './errors.js';
import { CreatedScimToken, CreateScimToken, ScimBody, ScimDocument, ScimListQuery, ScimTokenPath, ScimTokens, ScimUserPath } from './schemas.js';
import type { ScimCaller, ScimTokenService } from './tokens.js';
import { USER_SCHEMA } from './user-resource.js';
import type { ScimUserService } from './users.js';

const error = ref(ErrorBody);
export const SCIM_PREFIX = '/scim/v2';
const SCIM_TYPE = 'application/scim+json; charset=utf-8';

function caller(request: FastifyRequest, membership: Membership | undefined, actor: Actor | undefined): DomainCaller {
  if (!membership || !actor) throw unauthorized();
  return { organizationId: membership.organizationId, actor, origin: originOf(request) };
}

export function scimTokenRoutes(tokens: ScimTokenService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['Directory sync (SCIM)'],
    auth: 'required',
    bodyLimit: 4 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/:id/scim-tokens',
        summary: 'Create a SCIM token',
        description:
          "For a directory (Okta, Entra ID, Google) to provision the organization's users at `APP_URL/scim/v2`. The token is " +
          'in this answer only (stored hashed). 409 when the organization has 10; 409 `reason: personal` in a personal organization.',
        orgRole: 'owner',
        impersonation: 'forbidden',
        schemas: { params: OrgId, body: ref(CreateScimToken), response: { 201: ref(CreatedScimToken), 409: error } },
        handler: ({ request, parameters, membership, actor }) => tokens.create(caller(request, membership, actor), parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/scim-tokens',
        summary: "The organization's SCIM tokens",
        description: 'Without the tokens themselves.',
        orgRole: 'owner',
        schemas: { params: OrgId, response: { 200: ref(ScimTokens) } },
        handler: ({ membership }) => tokens.list(membership!.organizationId),
      }),
      route({
        method: 'DELETE',
        path: '/:id/scim-tokens/:tokenId',
        summary: 'Revoke a SCIM token',
        orgRole: 'owner',
        schemas: { params: ScimTokenPath, response: { 204: null, 404: error } },
        handler: async ({ request, parameters, membership, actor }) => {
          await tokens.revoke(caller(request, membership, actor), parameters.path.tokenId);
          return undefined;
        },
      }),
    ],
  };
}

export interface ScimRouteDeps {
  tokens: ScimTokenService;
  users: ScimUserService;
  baseUrl: string;
  log: Logger;
  /** counts a token's requests (SCIM_LIMIT_TOKEN); null: no limit */
  tokenLimiter: RateLimiterAbstract | null;
}

/** One point of the token's limit: 429 in SCIM's shape, with Retry-After, when it has none left. */
async function takeTokenPoint(limiter: RateLimiterAbstract, who: ScimCaller, reply: FastifyReply): Promise<void> {
  try {
    await take(limiter, who.tokenId);
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 429) throw err;
    for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
    throw new ScimHttpError(429, 'Too many requests with this token; try again after the time Retry-After gives');
  }
}

export function scimRoutes(deps: ScimRouteDeps): RouteGroup {
  const { tokens, users, baseUrl, log, tokenLimiter } = deps;

  /** Authenticates the token, runs `work`, and writes its answer (or SCIM's error) as application/scim+json. */
  const scim = async (request: FastifyRequest, reply: FastifyReply, work: (who: ScimCaller) => Promise<unknown>, status = 200): Promise<string> => {
    reply.type(SCIM_TYPE).header('cache-control', 'no-store');
    try {
      const who = await tokens.authenticate(request.headers.authorization);
      if (!who) {
        reply.header('www-authenticate', 'Bearer realm="scim"');
        throw new ScimHttpError(401, 'A valid SCIM bearer token is required');
      }
      // a directory's pushes make accounts and memberships: bounded per token
      if (tokenLimiter) await takeTokenPoint(tokenLimiter, who, reply);
      const body = await work(who);
      if (body === undefined) {
        reply.code(204);
        return '';
      }
      reply.code(status);
      return JSON.stringify(body);
    } catch (err) {
      if (!(err instanceof ScimHttpError)) throw err;
      if (err.status >= 400)
        log.info('scim/refused', `SCIM ${request.method} refused: ${err.status} ${err.scimType ?? ''}`.trim(), {
          status: err.status,
          'scim-type': err.scimType ?? null,
        });
      reply.code(err.status);
      return JSON.stringify(err.body());
    }
  };
  const bodyOf = (raw: unknown): Record<string, unknown> => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ScimHttpError(400, 'The body must be a JSON object', 'invalidSyntax');
    return raw as Record<string, unknown>;
  };
  // the route's refusals are SCIM's error document: no token 401, bad input 400, not this organization's 404, taken 409;
  // a body that is not JSON at all is refused by the pipeline first, in its own error shape
  const scimErrors = { 400: Type.Union([ScimDocument, error]), 401: ScimDocument, 404: ScimDocument, 409: ScimDocument, 429: ScimDocument };
  const doc = { 200: ScimDocument, 201: ScimDocument, 204: null, ...scimErrors };
  const scimRoute = { csrf: false } as const;

  return {
    prefix: SCIM_PREFIX,
    tags: ['Directory sync (SCIM)'],
    auth: 'none',
    bodyLimit: 64 * 1024,
    routes: [
      route({
        ...scimRoute,
        method: 'GET',
        path: '/ServiceProviderConfig',
        summary: 'SCIM: what this service provider supports',
        schemas: { response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply }) => scim(request, reply, async () => serviceProviderConfig(baseUrl)),
      }),
      route({
        ...scimRoute,
        method: 'GET',
        path: '/ResourceTypes',
        summary: 'SCIM: the resource types (User)',
        schemas: { response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply }) => scim(request, reply, async () => listOf([userResourceType(baseUrl)])),
      }),
      route({
        ...scimRoute,
        method: 'GET',
        path: '/Schemas',
        summary: 'SCIM: the schemas (User)',
        schemas: { response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply }) => scim(request, reply, async () => listOf([userSchema(baseUrl)])),
      }),
      route({
        ...scimRoute,
        method: 'GET',
        path: '/Users',
        summary: "SCIM: the organization's users",
        description:
          'Filter (`userName eq "…"` and the rest of RFC 7644 §3.4.2.2), `startIndex` (1-based), `count` (at most 200). ' +
          "Bearer: a SCIM token of the organization. Errors in SCIM's shape (`invalidFilter`, `invalidValue`).",
        schemas: { querystring: ScimListQuery, response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply, parameters }) => scim(request, reply, (who) => users.list(who, parameters.query as Record<string, string>)),
      }),
      route({
        ...scimRoute,
        method: 'POST',
        path: '/Users',
        summary: 'SCIM: provision a user',
        description:
          "Creates (or links, by email in a verified domain) the account and its membership with the token's default role. " +
          '409 `uniqueness` when the user exists in the organization.',
        schemas: { body: ScimBody, response: doc },
        handler: ({ request, reply, parameters }) => scim(request, reply, (who) => users.create(who, bodyOf(parameters.body), originOf(request)), 201),
      }),
      route({
        ...scimRoute,
        method: 'GET',
        path: '/Users/:userId',
        summary: 'SCIM: a user',
        schemas: { params: ScimUserPath, response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply, parameters }) => scim(request, reply, (who) => users.get(who, parameters.path.userId)),
      }),
      route({
        ...scimRoute,
        method: 'PUT',
        path: '/Users/:userId',
        summary: 'SCIM: replace a user',
        description: "`active: false` suspends the membership and ends the account's sessions; `active: true` lifts it.",
        schemas: { params: ScimUserPath, body: ScimBody, response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply, parameters }) =>
          scim(request, reply, (who) => users.replace(who, parameters.path.userId, bodyOf(parameters.body), originOf(request))),
      }),
      route({
        ...scimRoute,
        method: 'PATCH',
        path: '/Users/:userId',
        summary: 'SCIM: change a user',
        description:
          'PatchOp operations, with or without a `path` (Okta: `{op: "replace", value: {active: false}}`; Entra ID: ' +
          '`{op: "Replace", path: "active", value: "False"}`).',
        schemas: { params: ScimUserPath, body: ScimBody, response: { 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply, parameters }) =>
          scim(request, reply, (who) => users.patch(who, parameters.path.userId, bodyOf(parameters.body), originOf(request))),
      }),
      route({
        ...scimRoute,
        method: 'DELETE',
        path: '/Users/:userId',
        summary: 'SCIM: remove a user from the organization',
        schemas: { params: ScimUserPath, response: { 204: null, 200: ScimDocument, ...scimErrors } },
        handler: ({ request, reply, parameters }) =>
          scim(request, reply, async (who) => {
            await users.remove(who, parameters.path.userId, originOf(request));
            return undefined;
          }),
      }),
    ],
  };
}

export { USER_SCHEMA };
