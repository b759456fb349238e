/**
 * Routes are data. Each feature module declares its routes with {@link route} (method, path,
 * summary, tags, auth requirement, schemas per input and per response status, handler) and
 * hands them over as a {@link RouteGroup}; validation, response checking, auth and the
 * OpenAPI document are all derived from that data. Data on a group (prefix, tags, auth)
 * applies to each of its routes, as in reitit.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ErrorBody, unauthorized } from './errors.js';
import { FORMATS } from './formats.js';
import { actorOf, authorizeOrg, type Actor, type ApiKeyCaller, type AuthUser, type Membership, type MembershipResolver, type OrgRole } from './org-access.js';
import { planCheck, planList, plansSentence, validateRequires, type SubscriptionResolver } from './plan-gate.js';
import type { GateConfig, ImpersonationRule, PlatformAdminResolver } from './route-gates.js';

export { hasRole, NO_ACCOUNT, type Actor, type ApiKeyCaller, type AuthUser, type Membership, type MembershipResolver, type OrgRole } from './org-access.js';
export type { OrganizationPlan, SubscriptionResolver } from './plan-gate.js';
export type { ImpersonationRule, PlatformAdminResolver } from './route-gates.js';

export type AuthRequirement = 'none' | 'optional' | 'required';

export interface RouteSchemas {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** a schema per status; `null` for a status without a body (204) */
  response: Record<number, TSchema | null>;
}

type StaticOr<T, Fallback> = T extends TSchema ? Static<T> : Fallback;
/** 2xx, and the 302 of a route that answers a browser's navigation with a redirect (sign-in with a provider) */
type SuccessStatus = 200 | 201 | 202 | 204 | 302;

/** The body type a handler returns: any of the route's 2xx responses. */
export type SuccessBody<S extends RouteSchemas> = {
  [K in keyof S['response'] & SuccessStatus]: S['response'][K] extends TSchema ? Static<S['response'][K]> : undefined;
}[keyof S['response'] & SuccessStatus];

/** What the pipeline decoded and validated, as the spec's `parameters`. */
export interface Parameters<S extends RouteSchemas> {
  path: StaticOr<S['params'], Record<string, never>>;
  query: StaticOr<S['querystring'], Record<string, never>>;
  body: StaticOr<S['body'], undefined>;
}



export interface HandlerContext<S extends RouteSchemas> {
  request: FastifyRequest;
  reply: FastifyReply;
  parameters: Parameters<S>;
  /** the caller, when a valid access token came with the request */
  user: AuthUser | undefined;
  /** the caller, when a valid API key came with the request (only on routes with `apiKeys`) */
  apiKey: ApiKeyCaller | undefined;
  /** the caller's membership of the route's organization, on routes with `orgRole` (a key's: see `Membership.apiKeyId`) */
  membership: Membership | undefined;
  /** who acts, for audit entries: `{accountId}` or `{apiKeyId}`; undefined for an anonymous request */
  actor: Actor | undefined;
}

export interface RouteDefinition<S extends RouteSchemas> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** relative to the group's prefix */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** defaults to the group's; `required` answers 401 without a valid access token */
  auth?: AuthRequirement;
  /** the status of a normal return; defaults to the lowest 2xx (or 3xx) in `response` */
  status?: number;
  schemas: S;
  /** keep the body as raw bytes (Buffer) instead of decoding it: signature checks need them */
  rawBody?: boolean;
  /** false exempts the route from the CSRF check (webhooks: the caller is a server) */
  csrf?: boolean;
  /** the largest body this route takes, bytes; defaults to the group's, then BODY_LIMIT */
  bodyLimit?: number;
  /** schemas shown in the OpenAPI document instead of the validated ones (e.g. one per query kind) */
  docs?: { body?: TSchema };
  /**
   * The role the caller needs in the organization named by the path parameter `orgParam`
   * (default `id`). Implies `auth: 'required'`; the caller's membership is looked up once
   * (the group's `memberships`): 404 for a non-member or a missing organization, 403 for a
   * lower role; the handler gets it as `membership`.
   */
  orgRole?: OrgRole;
  /** the path parameter naming the organization, for `orgRole`; default `id` */
  orgParam?: string;
  /**
   * Plans that open the route (with `orgRole`): after the role check, the organization's
   * subscription must be `active` or `trialing` on one of them, else 402 `payment-required`
   * with `plans`. Read through the group's `subscriptions`.
   */
  requires?: { plans: string[] };
  /**
   * Accept an API key (`Authorization: Bearer sk_…`) as the caller. On an `orgRole` route, a key
   * of the organization acts with its role as the membership's (`membership.accountId` is then
   * `NO_ACCOUNT`: record who acted from `actor`); a key of another organization gets the 404 of a
   * non-member. Off by default: a key on a route without it is 401, so a route opts in once its
   * handler works for a caller that is not a person (docs/api-keys.md).
   */
  apiKeys?: boolean;
  /**
   * Platform admins only (defaults to the group's): anyone else gets the 404 of an unknown route,
   * before anything else is checked (http/route-gates.ts; the group's `platformAdmins` decides).
   */
  platformAdmin?: boolean;
  /**
   * An impersonated session (a platform admin acting as the account): `forbidden` answers it 403
   * `impersonation-forbidden`; `allowed` lets it reach a `platformAdmin` route (which it otherwise may not).
   */
  impersonation?: ImpersonationRule;
  /**
   * Returns the body (or a promise of it). A handler that can answer without waiting may
   * return the body directly: no promise is made for the request (see docs/performance.md).
   */
  handler(ctx: HandlerContext<S>): SuccessBody<S> | Promise<SuccessBody<S>>;
}

/** A route with its types erased, as groups hold them. */
export type Route = Omit<RouteDefinition<RouteSchemas>, 'handler'> & {
  handler(ctx: HandlerContext<RouteSchemas>): unknown;
};

export interface RouteGroup {
  prefix: string;
  tags?: string[];
  auth?: AuthRequirement;
  /** the largest body the group's routes take, bytes */
  bodyLimit?: number;
  /** looks up memberships for the group's `orgRole` routes (required when one has it) */
  memberships?: MembershipResolver;
  /** looks up subscriptions for the group's `requires` routes (required when one has it) */
  subscriptions?: SubscriptionResolver;
  /** the routes' `platformAdmin` unless they say otherwise */
  platformAdmin?: boolean;
  /** decides who is a platform admin, for `platformAdmin` routes (required when one has it) */
  platformAdmins?: PlatformAdminResolver;
  routes: Route[];
}

/** The caller on an `auth: 'required'` route: the route layer has refused the request without one, so absent is a bug: 401. */
export function requireUser<U>(user: U | undefined): U {
  if (!user) throw unauthorized();
  return user;
}

/** Declares a route; the schemas type the handler's parameters and return value. */
export function route<S extends RouteSchemas>(definition: RouteDefinition<S>): Route {
  return definition as unknown as Route;
}

/** A reference to a named schema (registered with `addSchema`), typed as that schema. */
export function ref<T extends TSchema>(schema: T): T {
  const id = (schema as { $id?: string }).$id;
  if (!id) throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` }) as unknown as T;
}

/** Per-route data the pipeline reads back through `request.routeOptions.config`. */
export interface RouteConfig extends GateConfig {
  /** under `/api` (from the group's prefix): API headers, the JWT middleware, the CSRF and origin checks */
  api: boolean;
  auth: AuthRequirement;
  rawBody: boolean;
  csrf: boolean;
  responses: Record<number, TSchema | null>;
  docs?: { body?: TSchema };
  /** the role needed in the organization named by the path parameter `orgParam` */
  orgRole?: OrgRole;
  orgParam?: string;
  /** the plans one of which the organization must have (active or trialing) */
  requires?: { plans: string[] };
  /** an API key may be the caller */
  apiKeys: boolean;
}

/**
 * Whether the matched route is an API route. Security decisions read this, never the raw URL:
 * the router decodes `/%61pi/…` and takes `http://host/api/…` as `/api/…`, a prefix test on
 * `request.url` does neither. Unmatched requests (404), static files and the docs are not API routes.
 */
export function isApiRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as Partial<RouteConfig> | undefined)?.api === true;
}

/** Whether the matched route takes an API key as the caller (route data `apiKeys`). */
export function acceptsApiKeys(request: FastifyRequest): boolean {
  return (request.routeOptions.config as Partial<RouteConfig> | undefined)?.apiKeys === true;
}

/** Whether the matched route names an organization (route data `orgRole`). */
export function isOrgRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as Partial<RouteConfig> | undefined)?.orgRole !== undefined;
}

/** a status a handler's normal return may have: 2xx, or 3xx for a route that redirects */
const isSuccess = (status: number) => status >= 200 && status < 400;

const isApiPrefix = (prefix: string) => prefix === '/api' || prefix.startsWith('/api/');

const CONTENT_TYPES = FORMATS.map((f) => f.mime);
const REQUEST_CONTENT_TYPES = [...CONTENT_TYPES, 'application/x-www-form-urlencoded'];
const errorRef = { $ref: 'error#' };

function validateDefinition(group: RouteGroup, r: Route): void {
  const where = `${r.method} ${group.prefix}${r.path}`;
  if (!r.summary) throw new Error(`Route ${where} needs a summary`);
  if (!r.schemas?.response || Object.keys(r.schemas.response).length === 0) {
    throw new Error(`Route ${where} must declare a response schema per status`);
  }
  if (!Object.keys(r.schemas.response).some((s) => isSuccess(Number(s)))) {
    throw new Error(`Route ${where} must declare at least one 2xx (or redirect) response`);
  }
  if ((r.method === 'GET' || r.method === 'DELETE') && r.schemas.body) throw new Error(`Route ${where}: ${r.method} takes no body`);
  if (r.orgRole) {
    const param = r.orgParam ?? 'id';
    if (!r.path.split('/').includes(`:${param}`)) throw new Error(`Route ${where}: orgRole needs the path parameter :${param}`);
    if (!group.memberships) throw new Error(`Route ${where}: orgRole needs the group's memberships resolver`);
    if (r.auth && r.auth !== 'required') throw new Error(`Route ${where}: orgRole requires authentication`);
  }
  if (r.requires) validateRequires(where, r.requires, Boolean(r.orgRole), Boolean(group.subscriptions));
  if (r.apiKeys && !r.orgRole && (r.auth ?? group.auth ?? 'none') === 'none') throw new Error(`Route ${where}: apiKeys on a route without authentication`);
  if ((r.platformAdmin ?? group.platformAdmin) && !group.platformAdmins) throw new Error(`Route ${where}: platformAdmin needs the group's platformAdmins resolver`);
  if (r.impersonation === 'forbidden' && (r.auth ?? group.auth ?? 'none') === 'none' && !r.orgRole) throw new Error(`Route ${where}: impersonation on a route without authentication`);
}

const MEMBERSHIP = Symbol('saas.membership');
type WithMembership = FastifyRequest & { [MEMBERSHIP]?: Membership };

const ROLE_SENTENCE: Record<OrgRole, string> = {
  member: 'Needs membership of the organization (any role).',
  admin: 'Needs the role `admin` or `owner` in the organization.',
  owner: 'Needs the role `owner` in the organization.',
};

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
 * documented responses of every route that can produce them.
 */
export function registerRouteGroup(app: FastifyInstance, group: RouteGroup): void {
  for (const r of group.routes) {
    validateDefinition(group, r);
    const platformAdmin = r.platformAdmin ?? group.platformAdmin ?? false;
    const auth = r.orgRole || platformAdmin ? 'required' : r.auth ?? group.auth ?? 'none';
    const successStatus = r.status ?? Math.min(...Object.keys(r.schemas.response).map(Number).filter(isSuccess));
    const responses: Record<number, TSchema | null> = { ...r.schemas.response };
    const hasInput = Boolean(r.schemas.body || r.schemas.querystring || r.schemas.params);
    const docResponses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(responses)) {
      docResponses[status] = schema === null ? { type: 'null', description: 'No content' } : schema;
    }
    const addError = (status: number, description: string) => {
      if (!(status in responses)) docResponses[status] = { ...errorRef, description };
    };
    if (hasInput) addError(400, 'Malformed body or request coercion failed');
    if (auth === 'required') addError(401, r.apiKeys ? 'Missing, invalid or expired access token or API key' : 'Missing, invalid or expired access token');
    if (r.orgRole) {
      addError(403, 'The caller\'s role in the organization is below the one the route needs');
      addError(404, 'No such organization, or the caller is not a member');
    }
    if (r.requires) addError(402, `\`payment-required\` (with \`plans\`): the organization has no active or trialing subscription on ${planList(r.requires.plans)}`);
    if (platformAdmin) addError(404, 'Not a platform admin, or not signed in: the answer of a path without a route');
    if (r.impersonation === 'forbidden') addError(403, '`impersonation-forbidden`: an impersonated session may not do this');
    if (r.apiKeys) addError(429, 'Too many API key lookups that found no live key from this address (`rate-limited`, with Retry-After)');
    addError(500, 'Unexpected error (`exception`) or a response that broke its schema (`response-coercion`)');

    const config: RouteConfig = {
      api: isApiPrefix(group.prefix), auth, rawBody: r.rawBody === true, csrf: r.csrf !== false, responses, docs: r.docs, apiKeys: r.apiKeys === true,
      ...(r.orgRole ? { orgRole: r.orgRole, orgParam: r.orgParam ?? 'id' } : {}),
      ...(r.requires ? { requires: { plans: [...r.requires.plans] } } : {}),
      ...(platformAdmin ? { platformAdmin: group.platformAdmins } : {}),
      ...(r.impersonation ? { impersonation: r.impersonation } : {}),
    };
    const description = r.orgRole
      ? [r.description, ROLE_SENTENCE[r.orgRole], r.requires && plansSentence(r.requires.plans)].filter(Boolean).join(' ')
      : r.description;
    app.route({
      method: r.method as HTTPMethods,
      url: group.prefix + r.path,
      config,
      ...(r.bodyLimit ?? group.bodyLimit ? { bodyLimit: r.bodyLimit ?? group.bodyLimit } : {}),
      schema: {
        summary: r.summary,
        description,
        ...(r.orgRole ? { 'x-org-role': r.orgRole } : {}),
        ...(r.requires ? { 'x-requires-plans': [...r.requires.plans] } : {}),
        ...(platformAdmin ? { 'x-platform-admin': true } : {}),
        tags: [...(group.tags ?? []), ...(r.tags ?? [])],
        ...(r.schemas.params ? { params: r.schemas.params } : {}),
        ...(r.schemas.querystring ? { querystring: r.schemas.querystring } : {}),
        ...(r.schemas.body ? { body: r.schemas.body, consumes: r.rawBody ? ['application/json'] : REQUEST_CONTENT_TYPES } : {}),
        produces: CONTENT_TYPES,
        response: docResponses,
        ...(auth === 'required' ? { security: [{ bearerAuth: [] }, ...(r.apiKeys ? [{ apiKeyAuth: [] }] : [])] } : {}),
      },
      preHandler: r.orgRole
        ? r.requires
          ? [orgRoleCheck(group.memberships!, r.orgRole, r.orgParam ?? 'id'), planCheck(group.subscriptions!, r.requires.plans, r.orgParam ?? 'id')]
          : orgRoleCheck(group.memberships!, r.orgRole, r.orgParam ?? 'id')
        : auth === 'required'
          ? (request, _reply, done) => done(request.user ? undefined : unauthorized(request.authFailure ?? 'Authentication required'))
          : undefined,
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
        });
        return result instanceof Promise ? result.then(finish) : finish(result);
      },
    });
  }
}

