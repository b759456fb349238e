/**
 * Routes are data. Each feature module declares its routes with `route` (route-definition.ts)
 * and hands them over as a `RouteGroup`; registering a group here derives validation, response
 * checking, authorization (auth, organization role, plan, API keys, verified email,
 * re-authentication, platform admin, impersonation) and the OpenAPI document from that data.
 * Data on a group (prefix, tags, auth) applies to each of its routes, as in reitit.
 */
import type { FastifyInstance, FastifyRequest, HTTPMethods, RouteGenericInterface } from 'fastify';
import type { TSchema } from 'typebox';
import { compressApiBody } from './compression.js';
import { english } from '../i18n/messages.js';
import { type ErrorLanguage, localeOf } from './error-language.js';
import { unauthorized, type Words } from './errors.js';
import { actorOf, authorizeOrg, type Membership, type MembershipResolver, type OrgRole } from './org-access.js';
import { featureCheck, planCheck, type Requirement, validateRequires } from './plan-gate.js';
import { limitOf, usageCheck, type UsageGate } from './usage-gate.js';
import {
  requireUser,
  resolved,
  type AccountGuard,
  type ReauthRule,
  type AuthRequirement,
  type Route,
  type RouteDocs,
  type RouteGroup,
} from './route-definition.js';
import { documentedSchema, isApiPrefix, reauthField } from './route-docs.js';
import { indexRoute } from './route-index.js';
import { routeDataOf } from './route-data.js';
import { API_SCOPE_PATTERN } from '../shared/oauth-scopes.js';
import { impersonationBodyCheck, type GateConfig } from './route-gates.js';

export { hasRole, NO_ACCOUNT, type Actor, type ApiKeyCaller, type AuthUser, type Membership, type MembershipResolver, type OrgRole } from './org-access.js';
export type { FeatureResolver, OrganizationPlan, Requirement, SubscriptionResolver } from './plan-gate.js';
export type { UsageGate } from './usage-gate.js';
export { MAX_PARAM_LENGTH } from './route-docs.js';
export type { ImpersonationBodyRule, ImpersonationRule, PlatformAdminResolver } from './route-gates.js';
export {
  ref,
  REAUTH_MAX_AGE_SECONDS,
  requireUser,
  route,
  type AccountGuard,
  type AuthRequirement,
  type HandlerContext,
  type Parameters,
  type Route,
  type RouteDefinition,
  type RouteGroup,
  type RouteSchemas,
  type SuccessBody,
  type ToolData,
} from './route-definition.js';
export { resolved } from './route-definition.js';

/** Per-route data the pipeline reads back through `routeDataOf(request)` (route-data.ts). */
export interface RouteConfig extends GateConfig {
  /** under `/api` (from the group's prefix): API headers, the JWT middleware, the CSRF and origin checks */
  api: boolean;
  auth: AuthRequirement;
  rawBody: boolean;
  /** the route's schema describes a body (one that came without any is then an empty map) */
  body: boolean;
  csrf: boolean;
  responses: Record<number, TSchema | null>;
  docs?: RouteDocs;
  /** the role needed in the organization named by the path parameter `orgParam` */
  orgRole?: OrgRole;
  orgParam?: string;
  /** the plans one of which the organization must have (active or trialing), or a feature its plan must have */
  requires?: Requirement;
  /** the meter whose hard limit closes the route (usage-gate.ts) */
  limit?: string;
  /** an API key may be the caller */
  apiKeys: boolean;
  /** the OAuth scopes that let an OAuth access token call it (route-gates.ts) */
  scopes?: readonly string[];
  /** the caller's address must be verified */
  verifiedEmail?: boolean;
  /** the caller re-authenticates; the body field that carries the password */
  reauth?: { passwordField: string };
}

/**
 * Whether the matched route is an API route. Security decisions read this, never the raw URL:
 * the router decodes `/%61pi/…` and takes `http://host/api/…` as `/api/…`, a prefix test on
 * `request.url` does neither. Unmatched requests (404), static files and the docs are not API routes.
 */
export function isApiRoute(request: FastifyRequest): boolean {
  return (routeDataOf(request) as Partial<RouteConfig>).api === true;
}

/** Whether the matched route takes an API key as the caller (route data `apiKeys`). */
export function acceptsApiKeys(request: FastifyRequest): boolean {
  return (routeDataOf(request) as Partial<RouteConfig>).apiKeys === true;
}

/** Whether the matched route names an organization (route data `orgRole`). */
export function isOrgRoute(request: FastifyRequest): boolean {
  return (routeDataOf(request) as Partial<RouteConfig>).orgRole !== undefined;
}

/** The route's authentication requirement (route data `auth`); `none` for a request no route of a group matched. */
export function routeAuth(request: FastifyRequest): AuthRequirement {
  return (routeDataOf(request) as Partial<RouteConfig>).auth ?? 'none';
}

/** a status a handler's normal return may have: 2xx, or 3xx for a route that redirects */
const isSuccess = (status: number) => status >= 200 && status < 400;

function validateDefinition(group: RouteGroup, r: Route): void {
  const where = `${r.method} ${group.prefix}${r.path}`;
  if (!r.summary) throw new Error(`Route ${where} needs a summary`);
  if (!r.schemas?.response || Object.keys(r.schemas.response).length === 0) {
    throw new Error(`Route ${where} must declare a response schema per status`);
  }
  if (!Object.keys(r.schemas.response).some((s) => isSuccess(Number(s)))) {
    throw new Error(`Route ${where} must declare at least one 2xx (or redirect) response`);
  }
  // a removal that needs re-authentication takes the password in an optional body: it is the one DELETE with a body
  if ((r.method === 'GET' || (r.method === 'DELETE' && !r.reauth)) && r.schemas.body) throw new Error(`Route ${where}: ${r.method} takes no body`);
  if (r.orgRole) {
    const param = r.orgParam ?? 'id';
    if (!r.path.split('/').includes(`:${param}`)) throw new Error(`Route ${where}: orgRole needs the path parameter :${param}`);
    if (!group.memberships) throw new Error(`Route ${where}: orgRole needs the group's memberships resolver`);
    if (r.auth && r.auth !== 'required') throw new Error(`Route ${where}: orgRole requires authentication`);
  }
  if (r.requires) validateRequires(where, r.requires, Boolean(r.orgRole), Boolean(group.subscriptions), Boolean(group.features));
  if (r.scopes) validateScopes(where, r, group);
  if (r.tool) validateTool(where, r, group);
  if (r.limit !== undefined && (typeof r.limit !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(r.limit)))
    throw new Error(`Route ${where}: limit must name a meter`);
  if (r.limit && !r.orgRole && !r.apiKeys) throw new Error(`Route ${where}: limit needs orgRole (or apiKeys): the usage is an organization's`);
  if (r.apiKeys && !r.orgRole && (r.auth ?? group.auth ?? 'none') === 'none') throw new Error(`Route ${where}: apiKeys on a route without authentication`);
  if ((r.platformAdmin ?? group.platformAdmin) && !group.platformAdmins)
    throw new Error(`Route ${where}: platformAdmin needs the group's platformAdmins resolver`);
  if (r.impersonation && r.impersonation !== 'allowed' && (r.auth ?? group.auth ?? 'none') === 'none' && !r.orgRole)
    throw new Error(`Route ${where}: impersonation on a route without authentication`);
  if (typeof r.impersonation === 'object') {
    const { field } = r.impersonation.forbiddenWhen;
    const body = resolved(r.schemas.body) as { properties?: Record<string, unknown> } | undefined;
    if (!body?.properties?.[field]) throw new Error(`Route ${where}: impersonation's forbiddenWhen needs the body field ${field}`);
  }
  if ((r.reauth || r.verifiedEmail) && r.auth && r.auth !== 'required') throw new Error(`Route ${where}: reauth and verifiedEmail require authentication`);
  if ((r.reauth || r.verifiedEmail) && r.apiKeys) throw new Error(`Route ${where}: reauth and verifiedEmail are about a person: no apiKeys`);
  if (r.reauth) {
    const field = reauthField(r);
    const properties = resolved(r.schemas.body) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    if (!properties?.properties?.[field]) throw new Error(`Route ${where}: reauth needs the body field ${field}`);
    if (properties.required?.includes(field)) throw new Error(`Route ${where}: reauth's ${field} must be optional (an account without a password gives none)`);
  }
}

/**
 * `scopes`: API scopes (`<area>:read|write`), on a route that needs a caller and is none of those
 * an OAuth token never reaches. That each is a scope the provider knows (built in, or declared by
 * a module) is the OAuth module's check once every route is registered.
 */
function validateScopes(where: string, r: Route, group: RouteGroup): void {
  const scopes = r.scopes ?? [];
  if (scopes.length === 0) throw new Error(`Route ${where}: scopes must name at least one scope`);
  for (const scope of scopes)
    if (!API_SCOPE_PATTERN.test(scope)) throw new Error(`Route ${where}: scope ${scope} is not <area>:read or <area>:write (see src/shared/oauth-scopes.ts)`);
  if (!r.orgRole && (r.auth ?? group.auth ?? 'none') === 'none') throw new Error(`Route ${where}: scopes on a public route`);
  if (r.reauth || (r.platformAdmin ?? group.platformAdmin) || r.impersonation === 'allowed')
    throw new Error(`Route ${where}: scopes on a re-authentication, platform admin or impersonation route (an OAuth token never reaches those)`);
}

/** `tool`: a well-formed name and words, on a route an agent's token reaches (its `scopes`) and no other. */
function validateTool(where: string, r: Route, group: RouteGroup): void {
  const { name, title, description } = r.tool!;
  if (typeof name !== 'string' || !/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name) || name.length > 64)
    throw new Error(`Route ${where}: tool name ${String(name)} must be lower-case words joined by hyphens, at most 64 characters`);
  if (!title || !description) throw new Error(`Route ${where}: tool ${name} needs a title and a description`);
  if (!r.scopes) throw new Error(`Route ${where}: tool ${name} on a route without scopes (an agent's token reaches only routes with scopes)`);
  if (r.reauth || (r.platformAdmin ?? group.platformAdmin) || r.impersonation === 'allowed')
    throw new Error(`Route ${where}: tool ${name} on a re-authentication, platform admin or impersonation route`);
}

/** The preHandler of a `verifiedEmail` route. */
function verifiedEmailCheck(guard: AccountGuard) {
  return async (request: FastifyRequest): Promise<void> => {
    await guard.requireVerifiedEmail(requireUser(request.user));
  };
}

/** The preHandler of a `reauth` route: the body is validated by now. */
function reauthCheck(guard: AccountGuard, field: string, when: ReauthRule['when']) {
  return async (request: FastifyRequest): Promise<void> => {
    if (when && !(await when(request))) return;
    const value = (request.body as Record<string, unknown> | undefined)?.[field];
    request.reauthenticated = await guard.reauthenticate(
      requireUser(request.user),
      typeof value === 'string' && value !== '' ? value : undefined,
      field,
      request.ip,
    );
  };
}

/** The onRequest check of an `auth: 'required'` route: 401 before the body is read (with `apiKeys`, a key is a caller too). */
function callerMissing(request: FastifyRequest, keys: boolean): Error | undefined {
  return request.user || (keys && request.apiKey) ? undefined : unauthorized(request.authFailure ?? 'Authentication required');
}

const MEMBERSHIP = Symbol('saas.membership');
type WithMembership = FastifyRequest & { [MEMBERSHIP]?: Membership };

/**
 * The preHandler of an `orgRole` route: the caller first (401), then its membership (one lookup
 * for an account, none for an API key): 404 for a non-member or a missing organization, 403 for
 * a lower role (org-access.ts).
 */
function orgRoleCheck(resolve: MembershipResolver, required: OrgRole, param: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const organizationId = (request.params as Record<string, string>)[param];
    (request as WithMembership)[MEMBERSHIP] = await authorizeOrg(request, organizationId, required, resolve, request.authFailure);
  };
}

/**
 * Registers a group's routes on the app. Fails at start-up when a route's data is
 * incomplete. Standard error responses (400 for input, 401 for auth, 500) are added to the
 * documented responses of every route that can produce them. `language`: the app's translator,
 * for the handlers' `say` (English without it).
 */
export function registerRouteGroup(app: FastifyInstance, group: RouteGroup, guard?: AccountGuard, usage?: UsageGate, language?: ErrorLanguage): void {
  // the request's locale is found only when a handler says something
  const sayFor = (request: FastifyRequest) => (words: Words) =>
    language ? language.translator.text(localeOf(request, language.defaultLocale), words) : english(words);
  for (const r of group.routes) {
    validateDefinition(group, r);
    if ((r.reauth || r.verifiedEmail) && !guard)
      throw new Error(`Route ${r.method} ${group.prefix}${r.path}: reauth and verifiedEmail need the app's account guard`);
    const platformAdmin = r.platformAdmin ?? group.platformAdmin ?? false;
    const auth = r.orgRole || r.reauth || r.verifiedEmail || platformAdmin ? 'required' : (r.auth ?? group.auth ?? 'none');
    const successStatus = r.status ?? Math.min(...Object.keys(r.schemas.response).map(Number).filter(isSuccess));
    const limit = limitOf(r);
    const config: RouteConfig = {
      api: isApiPrefix(group.prefix),
      auth,
      rawBody: r.rawBody === true,
      body: r.schemas.body !== undefined,
      csrf: r.csrf !== false,
      responses: { ...r.schemas.response },
      docs: r.docs,
      apiKeys: r.apiKeys === true,
      ...(r.orgRole ? { orgRole: r.orgRole, orgParam: r.orgParam ?? 'id' } : {}),
      ...(r.requires ? { requires: 'feature' in r.requires ? { feature: r.requires.feature } : { plans: [...r.requires.plans] } } : {}),
      ...(r.scopes ? { scopes: [...r.scopes] } : {}),
      ...(limit ? { limit } : {}),
      ...(r.verifiedEmail ? { verifiedEmail: true } : {}),
      ...(r.reauth ? { reauth: { passwordField: reauthField(r) } } : {}),
      ...(platformAdmin ? { platformAdmin: group.platformAdmins } : {}),
      ...(r.impersonation ? { impersonation: r.impersonation } : {}),
    };
    const accountChecks = [
      ...(r.verifiedEmail ? [verifiedEmailCheck(guard!)] : []),
      ...(r.reauth ? [reauthCheck(guard!, reauthField(r), typeof r.reauth === 'object' ? r.reauth.when : undefined)] : []),
    ];
    indexRoute(app, r.method, group.prefix + r.path);
    app.route<RouteGenericInterface, RouteConfig>({
      method: r.method as HTTPMethods,
      url: group.prefix + r.path,
      config,
      ...((r.bodyLimit ?? group.bodyLimit) ? { bodyLimit: r.bodyLimit ?? group.bodyLimit } : {}),
      schema: documentedSchema(r, { auth, platformAdmin, limit }, group),
      // the body is compressed by the route's own onSend (compression.ts), not @fastify/compress's
      // three hooks per request; a GET (HEAD with it) has no body to decompress
      compress: false,
      ...(r.method === 'GET' ? { decompress: false as const } : {}),
      onSend: compressApiBody,
      // the caller before the input: a request without one is 401 whatever its body holds
      onRequest: auth === 'required' ? (request, _reply, done) => done(callerMissing(request, r.apiKeys === true)) : undefined,
      preHandler: [
        ...(typeof r.impersonation === 'object' ? [impersonationBodyCheck(r.impersonation)] : []),
        ...(r.orgRole ? [orgRoleCheck(group.memberships!, r.orgRole, r.orgParam ?? 'id')] : []),
        ...(r.orgRole && r.requires && 'plans' in r.requires ? [planCheck(group.subscriptions!, r.requires.plans, r.orgParam ?? 'id')] : []),
        ...(r.orgRole && r.requires && 'feature' in r.requires ? [featureCheck(group.features!, r.requires.feature, r.orgParam ?? 'id')] : []),
        // without a gate (a bare app, in tests) limits are not enforced; the system always has one
        ...(limit && usage ? [usageCheck(usage, limit, r.orgRole ? (r.orgParam ?? 'id') : undefined)] : []),
        ...accountChecks,
      ],
      // Without a promise when the route's handler answers at once: Fastify sends a plain
      // return value itself, and a promise per request is measurable (docs/performance.md).
      handler: (request, reply) => {
        const finish = (body: unknown) => {
          if (reply.sent) return undefined;
          reply.code(reply.statusCode !== 200 ? reply.statusCode : successStatus);
          if (body === undefined) {
            reply.send();
            return undefined;
          }
          return body;
        };
        const result = r.handler({
          request,
          reply,
          parameters: {
            path: (request.params ?? {}) as never,
            query: (request.query ?? {}) as never,
            body: request.body as never,
          },
          user: request.user,
          apiKey: request.apiKey,
          membership: (request as WithMembership)[MEMBERSHIP],
          actor: actorOf(request),
          say: sayFor(request),
        });
        return result instanceof Promise ? result.then(finish) : finish(result);
      },
    });
  }
}
