/**
 * Two rules of route data about who the caller is, applied once for every route (docs/admin.md):
 *
 * - `platformAdmin: true`: only platform admins reach the route. Anyone else, signed in or not,
 *   gets exactly what a path without a route gets (404 `not-found`, same body and headers), and
 *   gets it before the body is read, the CSRF check or any other check runs, so no answer tells
 *   that the route exists. Who is an admin is the group's `platformAdmins` resolver (the admin
 *   module's rule: this layer knows no feature).
 * - `impersonation`: a session in which a platform admin acts as the account (the access token's
 *   `act` claim) is refused with 403 `impersonation-forbidden` on `forbidden` routes (whatever
 *   signs in as, or keeps acting for, the account or its organizations after the session ends:
 *   credentials, deletion, SAML connections, SCIM tokens, webhook endpoints), and reaches a
 *   `platformAdmin` route only where it is `allowed` (ending the impersonation). A rule that
 *   depends on the body, `{forbiddenWhen: {field, values}}` (an invitation with a role of admin or
 *   above), is refused the same way once the body is validated ({@link impersonationBodyCheck}).
 *
 * - `scopes`: an OAuth access token (src/oauth/) reaches only the routes that declare one of its
 *   scopes; elsewhere it is 403 `insufficient-scope` (a platform admin route answers it the 404).
 *
 * The gate runs as a step of the app's `onRequest` hook, right after the JWT middleware.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';
import { list, phrase } from '../i18n/messages.js';
import type { AuthUser } from './org-access.js';
import { routeDataOf } from './route-data.js';
import { ANSWERED, type RequestStep, type StepResult } from './request-steps.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Answers whether a signed-in caller (never an impersonated session) is a platform admin. */
export type PlatformAdminResolver = (user: AuthUser) => Promise<boolean>;

/** Refused to an impersonated session when the body's `field` holds one of `values` (absent: allowed). */
export interface ImpersonationBodyRule {
  forbiddenWhen: { field: string; values: readonly string[] };
}

export type ImpersonationRule = 'forbidden' | 'allowed' | ImpersonationBodyRule;

/** 403 `insufficient-scope`: an OAuth access token without one of the route's scopes (none: the route takes no OAuth token). */
export function insufficientScope(scopes: readonly string[]): HttpError {
  return new HttpError(
    403,
    {
      type: 'insufficient-scope',
      message: scopes.length
        ? phrase('This route needs an OAuth token with the scope {scopes}', { scopes: list(scopes, 'disjunction') })
        : "This route does not take OAuth tokens; use the account's own session",
      scopes: [...scopes],
    },
    { 'www-authenticate': `Bearer error="insufficient_scope"${scopes.length ? `, scope="${scopes.join(' ')}"` : ''}` },
  );
}

/** The route data the gate reads back (part of RouteConfig). */
export interface GateConfig {
  /** the OAuth scopes that open the route to an OAuth access token */
  scopes?: readonly string[];
  /** set on `platformAdmin` routes: the group's resolver */
  platformAdmin?: PlatformAdminResolver;
  impersonation?: ImpersonationRule;
}

export function impersonationForbidden(): HttpError {
  return new HttpError(403, {
    type: 'impersonation-forbidden',
    message:
      "Not in an impersonated session: what signs in as the account or acts for it or its organizations afterwards (credentials, sign-in methods, API keys, SAML, SCIM tokens, webhook endpoints, admin invitations, deletion) is its owner's alone",
  });
}

/** The preHandler of a route with a body-dependent impersonation rule: the body is validated by now. */
export function impersonationBodyCheck(rule: ImpersonationBodyRule) {
  const { field, values } = rule.forbiddenWhen;
  return async (request: FastifyRequest): Promise<void> => {
    if (!request.user?.actor) return;
    const value = (request.body as Record<string, unknown> | undefined)?.[field];
    if (typeof value === 'string' && values.includes(value)) throw impersonationForbidden();
  };
}

/** Whether the matched route is open to platform admins only. */
export function isPlatformAdminRoute(request: FastifyRequest): boolean {
  return (routeDataOf(request) as GateConfig).platformAdmin !== undefined;
}

/**
 * Installs the gate. `unmatched` answers as for a path without a route (the app's not-found
 * answer, headers included), so a refused caller learns nothing.
 */
export interface Unmatched {
  /** sets the headers a path without a route gets (before its answer) */
  headers(reply: FastifyReply): void;
  /** answers as for a path without a route */
  answer(request: FastifyRequest, reply: FastifyReply): void;
}

/** The gate, a step of the app's one `onRequest` hook (request-steps.ts), right after the JWT middleware. */
export function routeGatesStep(unmatched: Unmatched): RequestStep {
  return (request, reply) => {
    const config = routeDataOf(request) as GateConfig;
    const user = request.user;
    if (config?.impersonation === 'forbidden' && user?.actor) return impersonationForbidden();
    // an OAuth access token reaches only the routes that declare one of its scopes
    if (user?.oauth && !config?.platformAdmin && !config?.scopes?.some((scope) => user.oauth!.scopes.includes(scope)))
      return insufficientScope(config?.scopes ?? []);
    const isAdmin = config?.platformAdmin;
    if (!isAdmin) return undefined;
    // refused before any route matters (csrf.ts), a path without a route included: left to that check, as for such a path
    if (request.headers['sec-fetch-site'] === 'cross-site' && !SAFE_METHODS.has(request.method)) {
      unmatched.headers(reply);
      return undefined;
    }
    // answered here: the request goes no further
    const refuse = (): StepResult => {
      unmatched.answer(request, reply);
      return ANSWERED;
    };
    if (user?.actor) return config.impersonation === 'allowed' ? undefined : refuse();
    if (!user || user.oauth) return refuse();
    return isAdmin(user).then((admin) => (admin ? undefined : refuse()));
  };
}
