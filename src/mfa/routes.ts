/** Two-factor (TOTP) routes of the account API, as data. docs/sign-in.md, docs/api.md. */
import type { FastifyRequest } from 'fastify';
import { originOf } from '../audit/log.js';
import { NoBody } from '../account/lifecycle-schemas.js';
import { ACCOUNT_GROUP, setSessionCookies, type AccountRouteOptions } from '../account/routes.js';
import { LogInResponse } from '../account/schemas.js';
import { signInClient } from '../account/devices.js';
import type { AccountService } from '../account/service.js';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup, requireUser } from '../http/routes.js';
import {
  BackupCodes,
  MfaLogIn,
  RegenerateBackupCodes,
  MfaLogInDocs,
  TwoFactorDisable,
  TwoFactorDisableDocs,
  TwoFactorEnable,
  TwoFactorSetup,
} from './schemas.js';
import type { MfaLogInService } from './log-in.js';
import type { ClientOrigin } from '../audit/log.js';
import type { TwoFactorService } from './service.js';

const error = ref(ErrorBody);
/** the audit's origin plus the address the limits count by */
export const clientOrigin = (request: FastifyRequest): ClientOrigin => ({ ...originOf(request), ip: request.ip });

export function twoFactorRoutes(twoFactor: TwoFactorService, mfaLogIn: MfaLogInService, accounts: AccountService, options: AccountRouteOptions): RouteGroup {
  return {
    ...ACCOUNT_GROUP,
    routes: [
      route({
        method: 'POST',
        path: '/2fa/setup',
        impersonation: 'forbidden',
        summary: 'Start setting up two-factor authentication',
        description:
          'A new TOTP secret for an authenticator app, as text and as an `otpauth://` URI (QR code). It stays pending, and ' +
          'replaces any pending one, until `POST /2fa/enable` gets a code from it; the secret is not shown again. 409 while two-factor is on.',
        auth: 'required',
        verifiedEmail: true,
        schemas: { body: ref(NoBody), response: { 200: ref(TwoFactorSetup), 409: error } },
        handler: ({ user }) => twoFactor.setup(requireUser(user)),
      }),
      route({
        method: 'POST',
        path: '/2fa/enable',
        impersonation: 'forbidden',
        summary: 'Turn two-factor authentication on',
        description:
          'Needs a current code of the pending secret (403 when wrong). Answers ten single-use backup codes, shown this once. ' +
          'From then on every sign-in but a passkey asks for a code. 409 without a pending setup or when it is on already. A notice is emailed.',
        auth: 'required',
        verifiedEmail: true,
        reauth: true,
        schemas: { body: ref(TwoFactorEnable), response: { 200: ref(BackupCodes), 403: error, 409: error, 429: error } },
        async handler({ user, parameters, request }) {
          return { 'backup-codes': await twoFactor.enable(requireUser(user), parameters.body, clientOrigin(request)) };
        },
      }),
      route({
        method: 'POST',
        path: '/2fa/disable',
        impersonation: 'forbidden',
        summary: 'Turn two-factor authentication off',
        description:
          'Needs a current code (or an unused backup code); 403 when it is wrong (counted against ' +
          'its failure limits, 429), 409 when two-factor is off. The secret and the backup codes are deleted. A notice is emailed.',
        auth: 'required',
        reauth: true,
        schemas: { body: ref(TwoFactorDisable), response: { 204: null, 403: error, 409: error, 429: error } },
        docs: { body: TwoFactorDisableDocs },
        async handler({ user, parameters, request }) {
          await twoFactor.disable(requireUser(user), parameters.body, clientOrigin(request));
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/2fa/backup-codes',
        impersonation: 'forbidden',
        summary: 'Regenerate the backup codes',
        description:
          'Ten new single-use backup codes, shown this once; the old ones no longer work. Needs a current code of the authenticator ' +
          'app (`code`; a backup code is refused): 403 when it is wrong (counted against the second-factor limits, 429), 409 when two-factor is off. ' +
          'A notice is emailed.',
        auth: 'required',
        reauth: true,
        schemas: { body: ref(RegenerateBackupCodes), response: { 200: ref(BackupCodes), 403: error, 409: error, 429: error } },
        async handler({ user, parameters, request }) {
          return { 'backup-codes': await twoFactor.regenerateBackupCodes(requireUser(user), parameters.body, clientOrigin(request)) };
        },
      }),
      route({
        method: 'POST',
        path: '/log-in/mfa',
        summary: 'Complete a log-in with a second factor',
        description:
          "The `mfa-token` from log-in's `mfa-required` answer and a current code (or a backup code, spent by its use). Answers " +
          'like log-in, with the refresh cookie. 401 for a wrong code, or for an mfa-token that is unknown, used or older than five minutes ' +
          '(five wrong codes spend it); a code already used is refused. Wrong codes are limited per account and per client address (429).',
        auth: 'none',
        schemas: { body: ref(MfaLogIn), response: { 200: ref(LogInResponse), 401: error, 429: error } },
        docs: { body: MfaLogInDocs },
        async handler({ parameters, request, reply }) {
          const { accountId } = await mfaLogIn.completeLogIn(parameters.body, clientOrigin(request));
          const session = await accounts.openSession(accountId, signInClient(request));
          setSessionCookies(reply, session, options);
          return session.body;
        },
      }),
    ],
  };
}
