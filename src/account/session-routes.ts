/** The account's sessions, its export and its deletion, as data. See docs/api.md. */
import { originOf } from '../audit/log.js';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup, requireUser } from '../http/routes.js';
import type { AccountData } from './account-data.js';
import { AccountExport, AccountSessions as AccountSessionsBody, DeleteAccount, SessionId } from './lifecycle-schemas.js';
import { ACCOUNT_GROUP, clearSessionCookies, type AccountRouteOptions } from './routes.js';
import type { AccountSessions } from './sessions.js';

const error = ref(ErrorBody);
export function sessionRoutes(sessions: AccountSessions, data: AccountData, options: AccountRouteOptions): RouteGroup {
  return {
    ...ACCOUNT_GROUP,
    auth: 'required',
    routes: [
      route({
        method: 'GET',
        path: '/sessions',
        summary: "The account's sessions",
        description:
          'One per live log-in (refresh-token family: not ended, not expired), most recently used first; ' +
          '`current` marks the session of the access token that asks.',
        schemas: { response: { 200: ref(AccountSessionsBody) } },
        async handler({ user }) {
          const u = requireUser(user);
          return { sessions: await sessions.list(u.id, u.sessionId) };
        },
      }),
      route({
        method: 'DELETE',
        path: '/sessions/:id',
        summary: 'End a session',
        description:
          "Revokes the session's refresh-token family: its refresh token stops working and its access tokens are refused " +
          "on every instance within a second. 404 for an id that is not a live session of the caller's account.",
        schemas: { params: SessionId, response: { 204: null, 404: error } },
        async handler({ parameters, user, request }) {
          await sessions.end(requireUser(user), parameters.path.id, originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'GET',
        path: '/export',
        summary: "Export the account's data",
        description: 'Everything kept about the account: the account, its live sessions and its payment events (GDPR access).',
        schemas: { response: { 200: ref(AccountExport) } },
        handler: ({ user }) => data.export(requireUser(user)),
      }),
      route({
        method: 'POST',
        path: '/delete',
        impersonation: 'forbidden',
        summary: 'Delete the account',
        reauth: true,
        description:
          'Ends every session first, then deletes ' +
          'the account, its tokens and its sessions; payment events stay, unlinked. Clears the refresh cookie. The organizations it alone owns go ' +
          'with it; their running subscriptions are canceled in Stripe first (502 `payment-provider-error` when Stripe fails: nothing is deleted).',
        schemas: { body: ref(DeleteAccount), response: { 204: null, 403: error, 429: error, 502: error } },
        async handler({ user, reply }) {
          await data.delete(requireUser(user));
          clearSessionCookies(reply, options);
          return undefined;
        },
      }),
    ],
  };
}
