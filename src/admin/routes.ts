/**
 * The admin API, as data (docs/admin.md). Every route is `platformAdmin`: anyone who is not a
 * platform admin gets the answer of a path without a route (http/route-gates.ts), so not even the
 * routes' existence shows. The one exception to who may call is stopping an impersonation, which
 * the impersonated session itself calls.
 */
import { originOf } from '../audit/log.js';
import { NoBody } from '../account/lifecycle-schemas.js';
import { clearImpersonationCookie, setImpersonationCookie, type AccountRouteOptions } from '../account/routes.js';
import { LogInResponse } from '../account/schemas.js';
import { ErrorBody } from '../http/errors.js';
import { ref, requireUser, route, type PlatformAdminResolver, type RouteGroup } from '../http/routes.js';
import type { Impersonation } from './impersonation.js';
import {
  AccountPath,
  AccountSearch,
  AdminAccountDetail,
  AdminAccountPage,
  AdminAuditLogPage,
  AdminAuditQuery,
  AdminOrganizationPage,
  AdminStats,
  ImpersonateRequest,
  LockRequest,
  OrgSearch,
  UnlockRequest,
} from './schemas.js';
import type { AdminService } from './service.js';

const error = ref(ErrorBody);

export function adminRoutes(
  admin: AdminService,
  impersonation: Impersonation,
  platformAdmins: PlatformAdminResolver,
  options: AccountRouteOptions,
): RouteGroup {
  return {
    prefix: '/api/admin',
    tags: ['Admin'],
    auth: 'required',
    platformAdmin: true,
    platformAdmins,
    bodyLimit: 16 * 1024,
    routes: [
      route({
        method: 'GET',
        path: '/accounts',
        summary: 'Find accounts',
        description:
          'With `q`: the accounts whose email starts with it (by email), then those whose name starts with it (by name), ' +
          'then those with a later word of the name starting with it (`zq12` finds `Quasar Zq12`), case-insensitively, each once. ' +
          "Without: the newest first. `limit` 1..100 (default 20); `cursor`: the previous page's `next-cursor`.",
        schemas: { querystring: AccountSearch, response: { 200: ref(AdminAccountPage) } },
        handler: ({ parameters }) => admin.searchAccounts(parameters.query),
      }),
      route({
        method: 'GET',
        path: '/accounts/:id',
        summary: 'An account',
        description: 'The account with its lock, subscription, organizations and roles, live session count and linked providers. 404 for an unknown id.',
        schemas: { params: AccountPath, response: { 200: ref(AdminAccountDetail), 404: error } },
        handler: ({ parameters }) => admin.account(parameters.path.id),
      }),
      route({
        method: 'POST',
        path: '/accounts/:id/lock',
        summary: 'Lock an account',
        description:
          'Every session of the account ends at once on every instance; every sign-in (password, second factor, passkey, ' +
          'provider, refresh) answers 403 `account-locked` until it is unlocked. `reason` is required and audited. ' +
          '403 for oneself or another platform admin; 409 when locked already.',
        schemas: { params: AccountPath, body: ref(LockRequest), response: { 200: ref(AdminAccountDetail), 403: error, 404: error, 409: error } },
        handler: ({ parameters, user, request }) => admin.lock(requireUser(user), parameters.path.id, parameters.body.reason, originOf(request)),
      }),
      route({
        method: 'POST',
        path: '/accounts/:id/unlock',
        summary: 'Unlock an account',
        description: 'Sign-in works again (the sessions that locking ended stay ended). 409 when it is not locked.',
        schemas: { params: AccountPath, body: ref(UnlockRequest), response: { 200: ref(AdminAccountDetail), 404: error, 409: error } },
        handler: ({ parameters, user, request }) => admin.unlock(requireUser(user), parameters.path.id, parameters.body.reason, originOf(request)),
      }),
      route({
        method: 'POST',
        path: '/accounts/:id/impersonate',
        summary: 'Impersonate an account',
        description:
          'A session of the account in which the caller acts: its access tokens carry `act: {sub: <admin id>}` (RFC 8693), it ends ' +
          'within one hour whatever the refreshes, and it cannot change the password, email, two-factor, passkeys or providers, delete the ' +
          'account or make API keys (403 `impersonation-forbidden`). Its changes are audited with the admin as actor. `reason` is required. ' +
          "Sets the `impersonation-token` cookie (refresh then uses it; the caller's own session stays). " +
          '403 for oneself, another platform admin, or a locked account (`account-locked`); 404 for an unknown id.',
        schemas: { params: AccountPath, body: ref(ImpersonateRequest), response: { 200: ref(LogInResponse), 403: error, 404: error } },
        async handler({ parameters, user, request, reply }) {
          const session = await impersonation.start(requireUser(user), parameters.path.id, parameters.body.reason, originOf(request));
          setImpersonationCookie(reply, session, options);
          return session.body;
        },
      }),
      route({
        method: 'POST',
        path: '/impersonation/stop',
        summary: 'Stop impersonating',
        description:
          "Called with the impersonated session's own access token (the one admin route it may call): ends that session, so its " +
          'access and refresh tokens answer 401 from then on, and clears the `impersonation-token` cookie. 409 for a session that is not an impersonation.',
        impersonation: 'allowed',
        schemas: { body: ref(NoBody), response: { 204: null, 409: error } },
        async handler({ user, request, reply }) {
          await impersonation.stop(requireUser(user), originOf(request));
          clearImpersonationCookie(reply, options);
          return undefined;
        },
      }),
      route({
        method: 'GET',
        path: '/orgs',
        summary: 'Find organizations',
        description:
          'With `q`: the organizations whose name starts with it (by name), then those whose slug does (by slug), ' +
          'case-insensitively. Without: the newest first. With member counts and subscriptions. `limit` 1..100 (default 20); `cursor`.',
        schemas: { querystring: OrgSearch, response: { 200: ref(AdminOrganizationPage) } },
        handler: ({ parameters }) => admin.searchOrganizations(parameters.query),
      }),
      route({
        method: 'GET',
        path: '/stats',
        summary: "The platform's numbers",
        description: 'Accounts, verified accounts, organizations, live subscriptions per plan, sign-ups in the last 7 and 30 days.',
        schemas: { response: { 200: ref(AdminStats) } },
        handler: () => admin.stats(),
      }),
      route({
        method: 'GET',
        path: '/audit-log',
        summary: 'The admin audit log',
        description:
          'Every admin action (locks, unlocks, impersonations) and every change made in an impersonated session, newest first, ' +
          'with the address of every account named. `account-id` keeps those about one account. `limit` 1..100 (default 50); `cursor`.',
        schemas: { querystring: AdminAuditQuery, response: { 200: ref(AdminAuditLogPage) } },
        handler: ({ parameters }) => admin.auditLog(parameters.query),
      }),
    ],
  };
}
