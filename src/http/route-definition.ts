/**
 * How a feature module declares its routes: {@link route} (method, path, summary, tags, auth
 * requirement, schemas per input and per response status, the authorization rules, handler)
 * gathered in a {@link RouteGroup}. Registering them (routes.ts) derives validation, response
 * checking, authorization and the OpenAPI document from this data.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { unauthorized, type Words } from './errors.js';
import type { Actor, ApiKeyCaller, AuthUser, Membership, MembershipResolver, OrgRole } from './org-access.js';
import type { FeatureResolver, Requirement, SubscriptionResolver } from './plan-gate.js';
import type { ImpersonationRule, PlatformAdminResolver } from './route-gates.js';

export type AuthRequirement = 'none' | 'optional' | 'required';

/** What the OpenAPI document shows in place of a route's validated schemas (see `docs`). */
export interface RouteDocs {
  body?: TSchema;
  response?: Record<number, TSchema>;
}

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

/** What the pipeline decoded and validated, as the handler's `parameters`. */
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
  /**
   * A message in the request's language, as its error answers are (docs/i18n.md): for a success
   * body's words (a 202's `message`). English where the app has no translator (a bare app in tests).
   */
  say(words: Words): string;
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
  /**
   * schemas shown in the OpenAPI document instead of the validated ones: the query endpoint's
   * body (one schema per kind) and its 200 (the union of the kinds' results, each checked by the
   * registry against its own kind's schema, so the pipeline does not check it a second time)
   */
  docs?: RouteDocs;
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
   * with `plans`. Read through the group's `subscriptions`. Or `{feature}`: the organization's
   * plan (the catalogue's) must have it, else 402 `payment-required` with `feature` and the
   * `plans` that have it; read through the group's `features`.
   */
  requires?: Requirement;
  /**
   * A meter whose hard limit (the organization's plan's, per billing period) closes the route:
   * 402 `usage-limit` once it is reached (src/http/usage-gate.ts). A route with `apiKeys` carries
   * `api-calls` for requests made with a key without saying so.
   */
  limit?: string;
  /**
   * Accept an API key (`Authorization: Bearer sk_…`) as the caller. On an `orgRole` route, a key
   * of the organization acts with its role as the membership's (`membership.accountId` is then
   * `NO_ACCOUNT`: record who acted from `actor`); a key of another organization gets the 404 of a
   * non-member. Off by default: a key on a route without it is 401, so a route opts in once its
   * handler works for a caller that is not a person (docs/api-keys.md).
   */
  apiKeys?: boolean;
  /**
   * OAuth scopes (src/shared/oauth-scopes.ts API_SCOPES) that open the route to an OAuth access
   * token holding one of them; the account's roles still apply. An OAuth token on a route
   * without `scopes` is 403 `insufficient-scope` (http/route-gates.ts). Never with `reauth`,
   * `platformAdmin` or `impersonation: 'allowed'` (refused at start-up).
   */
  scopes?: readonly string[];
  /**
   * The route as a tool of the MCP server (src/mcp/, docs/mcp.md): its name (`get-account`, unique
   * in the system), a title and what it does, for an agent to choose it. A tool call runs the route
   * itself, every gate included. Only on a route that declares `scopes` (what an agent's token can
   * reach), never with `reauth`, `platformAdmin` or `impersonation: 'allowed'` (refused at start-up).
   */
  tool?: ToolData;
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
  reauth?: boolean | ReauthRule;
  /**
   * Platform admins only (defaults to the group's): anyone else gets the 404 of an unknown route,
   * before anything else is checked (http/route-gates.ts; the group's `platformAdmins` decides).
   */
  platformAdmin?: boolean;
  /**
   * An impersonated session (a platform admin acting as the account): `forbidden` answers it 403
   * `impersonation-forbidden`; `allowed` lets it reach a `platformAdmin` route (which it otherwise may not);
   * `{forbiddenWhen: {field, values}}` answers it 403 when the validated body's `field` is one of `values`.
   */
  impersonation?: ImpersonationRule;
  /**
   * Returns the body (or a promise of it). A handler that can answer without waiting may
   * return the body directly: no promise is made for the request (see docs/performance.md).
   */
  handler(ctx: HandlerContext<S>): SuccessBody<S> | Promise<SuccessBody<S>>;
}

/** A route's MCP tool: see {@link RouteDefinition.tool}. */
export interface ToolData {
  /** lower-case words joined by hyphens, at most 64 characters */
  name: string;
  title: string;
  description: string;
}

/**
 * `reauth` in full: the body field of the password (default `password`), and `when`, the
 * condition under which the change is sensitive (the route's own, from the validated request:
 * an OAuth consent that adds a lasting or write scope); without it, always.
 */
export interface ReauthRule {
  passwordField?: string;
  /** decides from the validated request (body, params, cookies, the caller) whether re-authentication applies */
  when?(request: FastifyRequest): boolean | Promise<boolean>;
  /** how the OpenAPI document states `when` */
  whenText?: string;
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
  /** whether an organization's plan has a feature, for `requires: {feature}` routes (required when one has it) */
  features?: FeatureResolver;
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
  /** resolves to how: `password` when it checked one, `recent-sign-in` when the session's age stood in (an account without a password) */
  reauthenticate(user: AuthUser, password: string | undefined, field: string, clientAddress: string): Promise<'password' | 'recent-sign-in'>;
}

/** How recent a sign-in stands in for the password of an account without one, seconds (docs/sign-in.md, "Re-authentication"). */
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
export function resolved(schema: TSchema | undefined): TSchema | undefined {
  return (schema as { [REFERENT]?: TSchema } | undefined)?.[REFERENT] ?? schema;
}
