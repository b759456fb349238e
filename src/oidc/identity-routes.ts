/** The account's provider identities, as data (docs/oidc.md): listed, and unlinked unless it is the last way to sign in. */
import { ACCOUNT_GROUP } from '../account/routes.js';
import { originOf } from '../audit/log.js';
import { Reauthenticate } from '../account/lifecycle-schemas.js';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup, requireUser } from '../http/routes.js';
import type { IdentityService } from './identities.js';
import { Identities, IdentityParam } from './schemas.js';

export function identityRoutes(identities: IdentityService): RouteGroup {
  return {
    ...ACCOUNT_GROUP,
    auth: 'required',
    routes: [
      route({
        method: 'GET',
        path: '/identities',
        summary: "The account's sign-in provider identities",
        description: 'The identities linked to the account (oldest first), and `has-password`: whether the account also has a password.',
        schemas: { response: { 200: ref(Identities) } },
        handler: ({ user }) => identities.list(requireUser(user).id),
      }),
      route({
        method: 'DELETE',
        path: '/identities/:id',
        impersonation: 'forbidden',
        summary: 'Unlink a provider identity',
        description:
          "The provider no longer signs in to this account. 404 for an id that is not one of the caller's identities; " +
          "409 `conflict` (`reason: last-sign-in-method`) when it is the account's last way to sign in (no password, no other identity). A notice is emailed.",
        reauth: true,
        schemas: { params: IdentityParam, body: ref(Reauthenticate), response: { 204: null, 404: ref(ErrorBody), 409: ref(ErrorBody) } },
        async handler({ parameters, user, request }) {
          await identities.unlink(requireUser(user), parameters.path.id, originOf(request));
          return undefined;
        },
      }),
    ],
  };
}
