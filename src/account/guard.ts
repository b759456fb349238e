/**
 * The account checks the route layer runs for route data `verifiedEmail` and `reauth`
 * (src/http/routes.ts): one rule each, stated once, applied to every route that names it.
 *
 * - A proven address before a lasting credential: an account whose address is not verified
 *   cannot add two-factor, a passkey, a provider link or an API key (403 `email-not-verified`).
 *   Whoever registered someone else's address could otherwise plant a way in that survives the
 *   owner's first proof of it (docs/security.md, "Account pre-hijacking").
 * - Re-authentication before a sensitive change: the password, or for an account without one a
 *   sign-in within the last 10 minutes (the access token's `auth_time`), so a stolen access
 *   token alone changes nothing that outlives it.
 */
import { phrase } from '../i18n/messages.js';
import { HttpError, unauthorized } from '../http/errors.js';
import { REAUTH_MAX_AGE_SECONDS, type AccountGuard, type AuthUser } from '../http/routes.js';
import { confirmPassword, type PasswordCheckDeps } from './password-check.js';

/** 403 `email-not-verified`: the address has not been proven yet. */
export function emailNotVerified(): HttpError {
  return new HttpError(403, {
    type: 'email-not-verified',
    message: 'Verify your email address first (open the link we sent you, or ask for a new one): until then no sign-in method or key can be added',
  });
}

/** 403 `reauthentication-required`: confirm with the password, or sign in again. */
export function reauthenticationRequired(field: string, hasPassword: boolean): HttpError {
  return new HttpError(
    403,
    hasPassword
      ? {
          type: 'reauthentication-required',
          message: 'Confirm this change with your password',
          method: 'password',
          errors: [{ path: `/${field}`, message: 'is required to confirm this change' }],
        }
      : {
          type: 'reauthentication-required',
          message: phrase('Sign in again to do this: it needs a sign-in within the last {minutes} minutes', { minutes: REAUTH_MAX_AGE_SECONDS / 60 }),
          method: 'recent-sign-in',
          'max-age': REAUTH_MAX_AGE_SECONDS,
        },
  );
}

export class AccountChecks implements AccountGuard {
  constructor(private readonly deps: PasswordCheckDeps) {}

  async requireVerifiedEmail(user: AuthUser): Promise<void> {
    const row = await this.deps.db.selectFrom('account').select('email_verified').where('id', '=', user.id).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    if (!row.email_verified) throw emailNotVerified();
  }

  async reauthenticate(user: AuthUser, password: string | undefined, field: string, clientAddress: string): Promise<'password' | 'recent-sign-in'> {
    const row = await this.deps.db.selectFrom('account').select(['password_hash']).where('id', '=', user.id).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    if (row.password_hash !== null) {
      if (password === undefined) throw reauthenticationRequired(field, true);
      // a wrong one is 403 with a field error, counted like a failed log-in (429 past the limits)
      await confirmPassword(this.deps, user.id, password, clientAddress, field);
      return 'password';
    }
    const age = user.authTime === undefined ? Infinity : Math.floor(Date.now() / 1000) - user.authTime;
    if (age > REAUTH_MAX_AGE_SECONDS) {
      this.deps.log.info('account/reauthentication-required', 'A sensitive change without a recent sign-in', { 'account-id': user.id });
      throw reauthenticationRequired(field, false);
    }
    return 'recent-sign-in';
  }
}
