/**
 * The account lifecycle's routes, as data: verification, password reset and change, email
 * change, the name. Sessions, export and deletion are in session-routes.ts. See docs/api.md.
 */
import { finished } from 'node:stream/promises';
import { originOf } from '../audit/log.js';
import { ErrorBody } from '../http/errors.js';
import { msg } from '../i18n/messages.js';
import { ref, route, type RouteGroup, requireUser } from '../http/routes.js';
import type { AccountLifecycle } from './lifecycle-service.js';
import {
  Accepted,
  ChangeEmail,
  ChangePassword,
  ForgotPassword,
  NoBody,
  ResetPassword,
  TokenRequest,
  UpdateAccount,
  VerifiedAccount,
} from './lifecycle-schemas.js';
import { UserAccount } from './schemas.js';
import { ACCOUNT_GROUP, REFRESH_COOKIE } from './routes.js';

const error = ref(ErrorBody);
/** The one answer of forgot-password, whatever the address. */
export const FORGOT_PASSWORD_ANSWER = msg('If an account uses this address, a link to reset its password is on its way. It expires in 1 hour.');

export function lifecycleRoutes(lifecycle: AccountLifecycle): RouteGroup {
  return {
    ...ACCOUNT_GROUP,
    routes: [
      route({
        method: 'POST',
        path: '/verify-email',
        summary: 'Verify the email address',
        description:
          'Takes the token of the emailed verification link (24 h, single use). 400 `invalid-token` when it is unknown, used or expired. ' +
          "The first proof of an address removes every sign-in method, API key and session added before it (they may be someone else's " +
          'who registered the address), except the session that sent this request (its access token or refresh cookie); an email says what was removed. ' +
          'The password goes too unless the request came with such a session: then the answer carries `password-reset-token`, for ' +
          '`reset-password`, so the person can set one at once.',
        schemas: { body: ref(TokenRequest), response: { 200: ref(VerifiedAccount), 400: error } },
        handler: ({ parameters, request, user }) =>
          lifecycle.verifyEmail(parameters.body.token, originOf(request), { user, refreshToken: request.cookies[REFRESH_COOKIE] }),
      }),
      route({
        method: 'POST',
        path: '/resend-verification',
        summary: 'Send a new verification link',
        description:
          "Emails a new verification link to the caller's address (nothing when it is verified already). " +
          'Rate-limited per account and per client address (429).',
        auth: 'required',
        schemas: { body: ref(NoBody), response: { 202: ref(Accepted), 429: error } },
        async handler({ user, request, say }) {
          await lifecycle.resendVerification(requireUser(user), request.ip);
          return { message: say('A verification link is on its way, unless the address is verified already.') };
        },
      }),
      route({
        method: 'POST',
        path: '/forgot-password',
        summary: 'Ask for a password reset link',
        description:
          'Always 202 with the same body, in the same time, whether an account uses the email or not; ' +
          'when one does, a reset link (1 h, single use) is emailed. Rate-limited per email and per client address (429).',
        schemas: { body: ref(ForgotPassword), response: { 202: ref(Accepted), 429: error } },
        async handler({ parameters, request, reply, say }) {
          // the work starts once the answer is out (finished or the connection closed)
          const answered = finished(reply.raw).catch(() => undefined);
          await lifecycle.forgotPassword(parameters.body.email, originOf(request), answered);
          return { message: say(FORGOT_PASSWORD_ANSWER) };
        },
      }),
      route({
        method: 'POST',
        path: '/reset-password',
        summary: 'Set a new password from a reset link',
        description:
          "Takes the reset link's token and the new password. Every session of the account ends " +
          '(refresh tokens and access tokens). When the reset is the first proof of the address, every sign-in method and API key added ' +
          'before it is removed too, and an email says what. 400 `invalid-token` when the token is unknown, used or expired.',
        schemas: { body: ref(ResetPassword), response: { 204: null, 400: error } },
        async handler({ parameters, request }) {
          await lifecycle.resetPassword(parameters.body.token, parameters.body.password, originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/change-password',
        impersonation: 'forbidden',
        summary: 'Change the password',
        description:
          "Every other session ends; the caller's stays. A notice is emailed. An account without a password (made by a provider " +
          'or an email sign-in) sets its first one here, after a recent sign-in.',
        auth: 'required',
        reauth: { passwordField: 'current-password' },
        schemas: { body: ref(ChangePassword), response: { 204: null, 403: error, 429: error } },
        async handler({ parameters, user, request }) {
          await lifecycle.changePassword(requireUser(user), parameters.body, originOf(request));
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/change-email',
        impersonation: 'forbidden',
        summary: 'Ask to change the email address',
        description:
          'Emails a confirmation link (24 h) to the new address and a notice to the old one; ' +
          'the address changes when the link is opened. 409 `conflict` when the new address is taken; 403 `sso-required` when an ' +
          "organization that enforces single sign-on on the current address's domain would lose it (owners excepted; docs/sso.md).",
        auth: 'required',
        reauth: true,
        schemas: { body: ref(ChangeEmail), response: { 202: ref(Accepted), 403: error, 409: error, 429: error } },
        async handler({ parameters, user, request, say }) {
          await lifecycle.changeEmail(requireUser(user), parameters.body, originOf(request));
          return { message: say('A confirmation link is on its way to the new address; the address changes when it is opened.') };
        },
      }),
      route({
        method: 'POST',
        path: '/confirm-email',
        summary: 'Confirm an email change',
        description:
          'Takes the token of the link sent to the new address: the account gets the new address, verified. ' +
          '400 `invalid-token` when the token is unknown, used or expired; 409 when another account took the address meanwhile; ' +
          '403 `sso-required` when the move is no longer allowed (as for change-email).',
        schemas: { body: ref(TokenRequest), response: { 200: ref(UserAccount), 400: error, 403: error, 409: error } },
        handler: ({ parameters, request }) => lifecycle.confirmEmail(parameters.body.token, originOf(request)),
      }),
      route({
        method: 'PATCH',
        path: '/me',
        summary: 'Update the current account',
        description:
          'Sets what the body names: the name (`null` clears it) and the language (`locale`: a supported one, a regional tag kept as its language, `null` to follow the browser; ' +
          'another is 400 naming the supported ones). The email changes through `change-email`, the password through `change-password`.',
        auth: 'required',
        schemas: { body: ref(UpdateAccount), response: { 200: ref(UserAccount), 400: error } },
        handler: ({ parameters, user }) => lifecycle.updateProfile(requireUser(user), parameters.body),
      }),
    ],
  };
}
