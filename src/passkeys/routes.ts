/**
 * Passkey routes, as data: managing the account's passkeys under `/api/account/passkeys`
 * (authenticated) and signing in under `/api/auth/passkey`. docs/sign-in.md, docs/api.md.
 */
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { ACCOUNT_GROUP, setSessionCookies, type AccountRouteOptions } from '../account/routes.js';
import { NoBody, Reauthenticate } from '../account/lifecycle-schemas.js';
import { LogInResponse } from '../account/schemas.js';
import { signInClient } from '../account/devices.js';
import type { AccountService } from '../account/service.js';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup, requireUser } from '../http/routes.js';
import { clientOrigin } from '../mfa/routes.js';
import {
  CreationOptionsJson,
  Passkey,
  PasskeyId,
  Passkeys,
  PasskeySignIn,
  PasskeySignInOptions,
  RegisterPasskey,
  RenamePasskey,
  StartPasskeyRegistration,
} from './schemas.js';
import type { PasskeyService } from './service.js';
import type { PasskeySignInService } from './sign-in.js';

const error = ref(ErrorBody);
const SHAPES = "The body's `response` (and the answer's options) are WebAuthn's JSON as @simplewebauthn writes it, camelCase keys inside.";

export function passkeyRoutes(passkeys: PasskeyService): RouteGroup {
  return {
    ...ACCOUNT_GROUP,
    auth: 'required',
    routes: [
      route({
        method: 'POST',
        path: '/passkeys/register/options',
        impersonation: 'forbidden',
        summary: 'Start registering a passkey',
        description:
          "PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()` (e.g. @simplewebauthn/browser's " +
          "`startRegistration`): a discoverable credential with user verification, the account's passkeys excluded. Its challenge is " +
          'single-use and expires in five minutes. 409 at 20 passkeys.',
        verifiedEmail: true,
        reauth: true,
        schemas: { body: ref(StartPasskeyRegistration), response: { 200: ref(CreationOptionsJson), 403: error, 409: error, 429: error } },
        handler: ({ user }) => passkeys.registrationOptions(requireUser(user)),
      }),
      route({
        method: 'POST',
        path: '/passkeys/register/verify',
        impersonation: 'forbidden',
        summary: 'Finish registering a passkey',
        description: `The authenticator's RegistrationResponseJSON and a name. 201 the passkey; 400 \`invalid-challenge\` when the ceremony's challenge is unknown, used or expired, 400 \`invalid-passkey-response\` when it does not verify (origin, RP id, user verification, signature); 409 when the credential is registered already. ${SHAPES}`,
        verifiedEmail: true,
        schemas: { body: ref(RegisterPasskey), response: { 201: ref(Passkey), 400: error, 409: error } },
        async handler({ user, parameters, request }) {
          const { response, name } = parameters.body;
          return passkeys.register(requireUser(user), response as unknown as RegistrationResponseJSON, name, clientOrigin(request));
        },
      }),
      route({
        method: 'GET',
        path: '/passkeys',
        summary: "The account's passkeys",
        description: 'Oldest first; no key material.',
        schemas: { response: { 200: ref(Passkeys) } },
        async handler({ user }) {
          return { passkeys: await passkeys.list(requireUser(user)) };
        },
      }),
      route({
        method: 'PATCH',
        path: '/passkeys/:id',
        impersonation: 'forbidden',
        summary: 'Rename a passkey',
        description: "404 for an id that is not one of the caller's passkeys.",
        schemas: { params: PasskeyId, body: ref(RenamePasskey), response: { 200: ref(Passkey), 404: error } },
        handler: ({ user, parameters, request }) => passkeys.rename(requireUser(user), parameters.path.id, parameters.body.name, clientOrigin(request)),
      }),
      route({
        method: 'DELETE',
        path: '/passkeys/:id',
        impersonation: 'forbidden',
        summary: 'Remove a passkey',
        description: "It no longer signs in. 404 for an id that is not one of the caller's passkeys. A notice is emailed.",
        reauth: true,
        schemas: { params: PasskeyId, body: ref(Reauthenticate), response: { 204: null, 404: error } },
        async handler({ user, parameters, request }) {
          await passkeys.remove(requireUser(user), parameters.path.id, clientOrigin(request));
          return undefined;
        },
      }),
    ],
  };
}

export function passkeySignInRoutes(passkeys: PasskeySignInService, accounts: AccountService, options: AccountRouteOptions): RouteGroup {
  return {
    prefix: '/api/auth/passkey',
    tags: ['Auth'],
    auth: 'none',
    bodyLimit: ACCOUNT_GROUP.bodyLimit,
    routes: [
      route({
        method: 'POST',
        path: '/options',
        summary: 'Start signing in with a passkey',
        description:
          'A challenge id and PublicKeyCredentialRequestOptionsJSON for `navigator.credentials.get()` (e.g. `startAuthentication`): ' +
          'no email and no credential list: the authenticator offers the passkeys it holds for this site. The challenge is single-use and ' +
          'expires in five minutes. Limited per client address (429).',
        schemas: { body: ref(NoBody), response: { 200: ref(PasskeySignInOptions), 429: error } },
        handler: ({ request }) => passkeys.signInOptions(request.ip),
      }),
      route({
        method: 'POST',
        path: '/verify',
        summary: 'Sign in with a passkey',
        description:
          "The challenge id and the authenticator's AuthenticationResponseJSON. Answers like log-in, with the refresh cookie; " +
          'a passkey with user verification is two factors in itself, so two-factor accounts are not asked for a code. 400 ' +
          '`invalid-challenge` for an unknown, used or expired challenge; 401 for a passkey that is not registered or does not verify ' +
          `(signature, origin, RP id, user verification, a signature counter that did not grow). ${SHAPES}`,
        schemas: { body: ref(PasskeySignIn), response: { 200: ref(LogInResponse), 400: error, 401: error } },
        async handler({ parameters, request, reply }) {
          const accountId = await passkeys.signIn(parameters.body, clientOrigin(request));
          // a passkey with user verification is both factors: never a second step (its audit entry is written)
          const session = await accounts.firstFactorPassed(accountId, 'passkey', signInClient(request), false);
          if ('mfaRequired' in session) throw new Error('A passkey sign-in was asked for a second factor');
          setSessionCookies(reply, session, options);
          return session.body;
        },
      }),
    ],
  };
}
