/**
 * Routes are data. Each feature module declares its routes with {@link route} (method, path,
 * summary, tags, auth requirement, schemas per input and per response status, handler) and
 * hands them over as a {@link RouteGroup}; validation, response checking, auth and the
 * OpenAPI document are all derived from that data. Data on a group (prefix, tags, auth)
 * applies to each of its routes, as in reitit.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteGenericInterface } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ErrorBody, unauthorized } from './errors.js';
import { FORMATS } from './formats.js';
import { routeDataOf } from './route-data.js';
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
   * The caller's address must be proven (a verification link, a reset link, a provider that
   * asserts it): a route that adds a lasting way in (two-factor, a passkey, a provider link, an
   * API key) answers 403 `email-not-verified` otherwise, so whoever registered someone else's
   * address cannot plant a credential that outlives the owner's first proof of it. Implies
   * `auth: 'required'`; checked through the app's {@link AccountGuard}.
   */
  verifiedEmail?: boolean;
  /**
   * A sensitive change: the caller re-authenticates. An account with a password gives it in the
   * body field `password` (or the field named here); one without a password must have signed in
   * within the last 10 minutes (the access token's `auth_time`). Else 403
   * `reauthentication-required`; a wrong password is 403 with a field error and counts like a
   * failed log-in. Implies `auth: 'required'`; checked through the app's {@link AccountGuard}
   * after the body is validated, before the handler.
   */
  reauth?: boolean | { passwordField: string };
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

/**
 * What the route layer asks of the caller's account for `verifiedEmail` and `reauth` routes
 * (implemented by the account module: src/account/guard.ts). Each throws the error to answer.
 */
export interface AccountGuard {
  /** 403 `email-not-verified` unless the account's address is verified */
  requireVerifiedEmail(user: AuthUser): Promise<void>;
  /** the password (when the account has one, from `field` of the body) or a recent sign-in; 403 otherwise */
  reauthenticate(user: AuthUser, password: string | undefined, field: string, clientAddress: string): Promise<void>;
}

/** How recent a sign-in stands in for the password of an account without one, seconds (DESIGN.md, "Sign-in completeness"). */
export const REAUTH_MAX_AGE_SECONDS = 600;

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
  const reference = Type.Unsafe<Static<T>>({ $ref: `${id}#` });
  // the schema it names, for checks of route data at start-up (not enumerable: no validator or document sees it)
  Object.defineProperty(reference, REFERENT, { value: schema });
  return reference as unknown as T;
}

const REFERENT = Symbol('saas.referent');

/** A schema, or the one a {@link ref} names. */
function resolved(schema: TSchema | undefined): TSchema | undefined {
  return (schema as { [REFERENT]?: TSchema } | undefined)?.[REFERENT] ?? schema;
}

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
  docs?: { body?: TSchema };
  /** the role needed in the organization named by the path parameter `orgParam` */
  orgRole?: OrgRole;
  orgParam?: string;
  /** the plans one of which the organization must have (active or trialing) */
  requires?: { plans: string[] };
  /** an API key may be the caller */
  apiKeys: boolean;
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

/** The router's longest path parameter (app.ts `maxParamLength`): a longer segment matches no route. */
export const MAX_PARAM_LENGTH = 200;

/** Each app's route paths as patterns, by method: what a 405's `Allow` lists. */
const routeIndexes = new WeakMap<FastifyInstance, Array<{ method: string; pattern: RegExp }>>();

function indexRoute(app: FastifyInstance, method: string, url: string): void {
  let index = routeIndexes.get(app);
  if (!index) routeIndexes.set(app, (index = []));
  const source = url.split('/').map((segment) => (segment.startsWith(':') ? `[^/]{1,${MAX_PARAM_LENGTH}}` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
  index.push({ method, pattern: new RegExp(`^${source}/?$`) });
}

/**
 * The methods the app's group routes answer at a decoded `path` (HEAD with GET), sorted; empty
 * when none does. Asked only for requests no route matched, so a scan is cheap enough.
 */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  const methods = new Set<string>();
  for (const { method, pattern } of routeIndexes.get(app) ?? []) {
    if (!pattern.test(path)) continue;
    methods.add(method);
    if (method === 'GET') methods.add('HEAD');
  }
  return [...methods].sort();
}

/** a status a handler's normal return may have: 2xx, or 3xx for a route that redirects */
const isSuccess = (status: number) => status >= 200 && status < 400;

const isApiPrefix = (prefix: string) => prefix === '/api' || prefix.startsWith('/api/');

const CONTENT_TYPES = FORMATS.map((f) => f.mime);
const REQUEST_CONTENT_TYPES = [...CONTENT_TYPES, 'application/x-www-form-urlencoded'];

/** The longest request target the pipeline answers (http/pipeline.ts `MAX_URL_LENGTH`), for the documents' 414. */
const URL_LIMIT = 8192;

/**
 * Whether a body schema can be sent as a form: every field a scalar (a form has only flat
 * text fields; `user[password]` is one key). Nested objects and lists are offered in the three
 * structured formats only.
 */
function isFlat(schema: TSchema | undefined): boolean {
  const body = resolved(schema) as { properties?: Record<string, TSchema> } | undefined;
  const scalar = (s: TSchema | undefined): boolean => {
    const r = resolved(s) as { type?: string | string[]; anyOf?: TSchema[]; oneOf?: TSchema[]; $ref?: string } | undefined;
    if (!r) return true;
    if (r.anyOf ?? r.oneOf) return (r.anyOf ?? r.oneOf)!.every(scalar);
    const types = Array.isArray(r.type) ? r.type : r.type ? [r.type] : [];
    return r.$ref === undefined && types.every((t) => t !== 'object' && t !== 'array');
  };
  return Object.values(body?.properties ?? {}).every(scalar);
}
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
  // a removal that needs re-authentication takes the password in an optional body: it is the one DELETE with a body
  if ((r.method === 'GET' || (r.method === 'DELETE' && !r.reauth)) && r.schemas.body) throw new Error(`Route ${where}: ${r.method} takes no body`);
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
  if ((r.reauth || r.verifiedEmail) && r.auth && r.auth !== 'required') throw new Error(`Route ${where}: reauth and verifiedEmail require authentication`);
  if ((r.reauth || r.verifiedEmail) && r.apiKeys) throw new Error(`Route ${where}: reauth and verifiedEmail are about a person: no apiKeys`);
  if (r.reauth) {
    const field = reauthField(r);
    const properties = resolved(r.schemas.body) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    if (!properties?.properties?.[field]) throw new Error(`Route ${where}: reauth needs the body field ${field}`);
    if (properties.required?.includes(field)) throw new Error(`Route ${where}: reauth's ${field} must be optional (an account without a password gives none)`);
  }
}

const reauthField = (r: Pick<Route, 'reauth'>) => (typeof r.reauth === 'object' ? r.reauth.passwordField : 'password');

/** The preHandler of a `verifiedEmail` route. */
function verifiedEmailCheck(guard: AccountGuard) {
  return async (request: FastifyRequest): Promise<void> => {
    await guard.requireVerifiedEmail(requireUser(request.user));
  };
}

/** The preHandler of a `reauth` route: the body is validated by now. */
function reauthCheck(guard: AccountGuard, field: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const value = (request.body as Record<string, unknown> | undefined)?.[field];
    await guard.reauthenticate(requireUser(request.user), typeof value === 'string' && value !== '' ? value : undefined, field, request.ip);
  };
}

const REAUTH_SENTENCE = (field: string) => 'Needs re-authentication: the account\'s password in `' + field + '`, or, for an account without a ' +
  `password, a sign-in within the last ${REAUTH_MAX_AGE_SECONDS / 60} minutes (403 \`reauthentication-required\` otherwise; a wrong password is 403 \`forbidden\`).`;
const VERIFIED_SENTENCE = 'Needs a verified email address (403 `email-not-verified`).';

/** The onRequest check of an `auth: 'required'` route: 401 before the body is read (with `apiKeys`, a key is a caller too). */
function callerMissing(request: FastifyRequest, keys: boolean): Error | undefined {
  return request.user || (keys && request.apiKey) ? undefined : unauthorized(request.authFailure ?? 'Authentication required');
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
export function registerRouteGroup(app: FastifyInstance, group: RouteGroup, guard?: AccountGuard): void {
  for (const r of group.routes) {
    validateDefinition(group, r);
    if ((r.reauth || r.verifiedEmail) && !guard) throw new Error(`Route ${r.method} ${group.prefix}${r.path}: reauth and verifiedEmail need the app's account guard`);
    const platformAdmin = r.platformAdmin ?? group.platformAdmin ?? false;
    const auth = r.orgRole || r.reauth || r.verifiedEmail || platformAdmin ? 'required' : r.auth ?? group.auth ?? 'none';
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
    // what every route may answer before its own checks: the pipeline's limits and the CSRF and origin checks
    addError(414, `\`uri-too-long\`: the request target is over ${URL_LIMIT} characters (or a path segment over ${MAX_PARAM_LENGTH})`);
    addError(431, '`headers-too-large`: the header section is over 16 KiB');
    if (auth === 'required') addError(401, r.apiKeys ? 'Missing, invalid or expired access token or API key' : 'Missing, invalid or expired access token');
    if (r.orgRole) {
      addError(403, 'The caller\'s role in the organization is below the one the route needs');
      addError(404, 'No such organization, or the caller is not a member');
    }
    if (r.requires) addError(402, `\`payment-required\` (with \`plans\`): the organization has no active or trialing subscription on ${planList(r.requires.plans)}`);
    if (platformAdmin) addError(404, 'Not a platform admin, or not signed in: the answer of a path without a route');
    if (r.impersonation === 'forbidden') addError(403, '`impersonation-forbidden`: an impersonated session may not do this');
    if (r.apiKeys) addError(429, 'Too many API key lookups that found no live key from this address (`rate-limited`, with Retry-After)');
    if (r.verifiedEmail || r.reauth) {
      const checks = [r.verifiedEmail && '`email-not-verified`: the account\'s address is not verified yet', r.reauth && '`reauthentication-required`, or `forbidden` for a wrong password']
        .filter(Boolean).join('; ');
      const existing = (docResponses[403] as { description?: string } | undefined)?.description;
      docResponses[403] = { ...errorRef, ...(docResponses[403] as object | undefined), description: existing ? `${checks}; ${existing}` : checks };
    }
    if (r.reauth) addError(429, 'Too many wrong passwords (`rate-limited`, with Retry-After)');
    if (r.method !== 'GET' && r.csrf !== false && isApiPrefix(group.prefix)) {
      const csrf = '`forbidden` with `reason: origin` (Origin or Referer names another site), `cross-site` (Sec-Fetch-Site) or `csrf` ' +
        '(a cookie-bearing request without a valid X-CSRF-Token)';
      const existing = docResponses[403] as { description?: string } | undefined;
      docResponses[403] = existing
        ? { ...existing, description: `${existing.description ?? 'The route\'s own refusal (see its description)'}; or ${csrf}` }
        : { ...errorRef, description: csrf };
    }
    addError(500, 'Unexpected error (`exception`) or a response that broke its schema (`response-coercion`)');

    const config: RouteConfig = {
      api: isApiPrefix(group.prefix), auth, rawBody: r.rawBody === true, body: r.schemas.body !== undefined, csrf: r.csrf !== false, responses, docs: r.docs, apiKeys: r.apiKeys === true,
      ...(r.orgRole ? { orgRole: r.orgRole, orgParam: r.orgParam ?? 'id' } : {}),
      ...(r.requires ? { requires: { plans: [...r.requires.plans] } } : {}),
      ...(r.verifiedEmail ? { verifiedEmail: true } : {}),
      ...(r.reauth ? { reauth: { passwordField: reauthField(r) } } : {}),
      ...(platformAdmin ? { platformAdmin: group.platformAdmins } : {}),
      ...(r.impersonation ? { impersonation: r.impersonation } : {}),
    };
    const description = [
      r.description, r.orgRole && ROLE_SENTENCE[r.orgRole], r.requires && plansSentence(r.requires.plans),
      r.verifiedEmail && VERIFIED_SENTENCE, r.reauth && REAUTH_SENTENCE(reauthField(r)),
    ].filter(Boolean).join(' ') || undefined;
    const accountChecks = [
      ...(r.verifiedEmail ? [verifiedEmailCheck(guard!)] : []),
      ...(r.reauth ? [reauthCheck(guard!, reauthField(r))] : []),
    ];
    indexRoute(app, r.method, group.prefix + r.path);
    app.route<RouteGenericInterface, RouteConfig>({
      method: r.method as HTTPMethods,
      url: group.prefix + r.path,
      config,
      ...(r.bodyLimit ?? group.bodyLimit ? { bodyLimit: r.bodyLimit ?? group.bodyLimit } : {}),
      schema: {
        summary: r.summary,
        description,
        ...(r.orgRole ? { 'x-org-role': r.orgRole } : {}),
        ...(r.requires ? { 'x-requires-plans': [...r.requires.plans] } : {}),
        ...(r.verifiedEmail ? { 'x-verified-email': true } : {}),
        ...(r.reauth ? { 'x-reauthentication': { 'password-field': reauthField(r), 'recent-sign-in-seconds': REAUTH_MAX_AGE_SECONDS } } : {}),
        ...(platformAdmin ? { 'x-platform-admin': true } : {}),
        tags: [...(group.tags ?? []), ...(r.tags ?? [])],
        ...(r.schemas.params ? { params: r.schemas.params } : {}),
        ...(r.schemas.querystring ? { querystring: r.schemas.querystring } : {}),
        ...(r.schemas.body ? { body: r.schemas.body, consumes: r.rawBody ? ['application/json'] : isFlat(r.schemas.body) ? REQUEST_CONTENT_TYPES : CONTENT_TYPES } : {}),
        produces: CONTENT_TYPES,
        response: docResponses,
        ...(auth === 'required' ? { security: [{ bearerAuth: [] }, ...(r.apiKeys ? [{ apiKeyAuth: [] }] : [])] } : {}),
        // optional: anonymous, or either credential (the query endpoint: each kind says what it needs)
        ...(auth === 'optional' && r.apiKeys ? { security: [{}, { bearerAuth: [] }, { apiKeyAuth: [] }] } : {}),
      },
      // the caller before the input: a request without one is 401 whatever its body holds
      onRequest: auth === 'required' ? (request, _reply, done) => done(callerMissing(request, r.apiKeys === true)) : undefined,
      preHandler: [
        ...(r.orgRole ? [orgRoleCheck(group.memberships!, r.orgRole, r.orgParam ?? 'id')] : []),
        ...(r.orgRole && r.requires ? [planCheck(group.subscriptions!, r.requires.plans, r.orgParam ?? 'id')] : []),
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
        });
        return result instanceof Promise ? result.then(finish) : finish(result);
      },
    });
  }
}

