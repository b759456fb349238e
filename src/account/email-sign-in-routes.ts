/** Email sign-in's routes, as data (docs/sign-in.md, docs/api.md). */
import { finished } from 'node:stream/promises';
import { Type } from 'typebox';
import { originOf } from '../audit/log.js';
import { signInClient } from './devices.js';
import { ErrorBody } from '../http/errors.js';
import { msg } from '../i18n/messages.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import { Accepted } from './lifecycle-schemas.js';
import { ACCOUNT_GROUP, setSessionCookies, type AccountRouteOptions } from './routes.js';
import { Email, LogInResponse, MfaRequired } from './schemas.js';
import { emailSignInProof, type EmailSignIn } from './email-sign-in.js';

/** The one answer of a request for an email sign-in, whatever the address. */
export const EMAIL_SIGN_IN_ANSWER = msg('If you can sign in with this address, a link and a code are on their way. They work once, for 15 minutes.');

export const StartEmailSignIn = Type.Object({ email: Email }, { $id: 'start-email-sign-in', additionalProperties: false });
export const VerifyEmailSignIn = Type.Object(
  {
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the `token` query parameter of the emailed link' })),
    email: Type.Optional(Type.String({ maxLength: 254, description: 'with `code`: the address the message went to' })),
    code: Type.Optional(Type.String({ maxLength: 16, description: 'with `email`: the 6-digit code of the message (spaces ignored)' })),
  },
  { $id: 'verify-email-sign-in', additionalProperties: false, description: '`token`, or `email` and `code`' },
);
export const EMAIL_SIGN_IN_SCHEMAS = [StartEmailSignIn, VerifyEmailSignIn];

export function emailSignInRoutes(emailSignIn: EmailSignIn, options: AccountRouteOptions): RouteGroup {
  const error = ref(ErrorBody);
  return {
    prefix: '/api/auth/email',
    tags: ['Auth'],
    auth: 'none',
    bodyLimit: ACCOUNT_GROUP.bodyLimit,
    routes: [
      route({
        method: 'POST',
        path: '/start',
        summary: 'Ask for an email sign-in',
        description:
          'Always 202 with the same body, in the same time, whatever the address. When an account uses it (or, with ' +
          'EMAIL_SIGN_UP on, when none does), a message with a link (`APP_URL/auth/email?token=…`) and a 6-digit code goes to it; both work ' +
          'once, for 15 minutes. Rate-limited per email and per client address (429).',
        schemas: { body: ref(StartEmailSignIn), response: { 202: ref(Accepted), 429: error } },
        async handler({ parameters, request, reply, say }) {
          // the work starts once the answer is out (finished or the connection closed)
          const answered = finished(reply.raw).catch(() => undefined);
          await emailSignIn.start(parameters.body.email, originOf(request), answered);
          return { message: say(EMAIL_SIGN_IN_ANSWER) };
        },
      }),
      route({
        method: 'POST',
        path: '/verify',
        summary: 'Sign in with an emailed link or code',
        description:
          "The link's `token`, or the `email` and its `code`. Answers like log-in (with the refresh cookie), or " +
          '`mfa-required` when two-factor is on. The address becomes verified (a first proof removes what was added before it, the ' +
          'password included: the answer then carries `password-reset-token` to set a new one at once); an ' +
          'address without an account gets one when EMAIL_SIGN_UP is on. 400 `invalid-token` for a bad, used or expired token; 401 ' +
          '`invalid-code` for a wrong code: the fifth wrong one voids the message (its link and code). 403 `account-locked` for a locked account. ' +
          "429 `rate-limited` (Retry-After) for a code once the address's wrong codes of the day are spent (EMAIL_SIGN_IN_CODE_FAILURES; its link " +
          "still works), and for any request past the client address's limit (EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS).",
        schemas: {
          body: ref(VerifyEmailSignIn),
          response: { 200: Type.Union([ref(LogInResponse), ref(MfaRequired)]), 400: error, 401: error, 403: error, 429: error },
        },
        async handler({ parameters, request, reply }) {
          const session = await emailSignIn.verify(emailSignInProof(parameters.body), signInClient(request));
          if ('mfaRequired' in session) return session.mfaRequired;
          setSessionCookies(reply, session, options);
          return session.body;
        },
      }),
    ],
  };
}
