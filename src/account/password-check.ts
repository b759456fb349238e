/**
 * The password re-entered to confirm a sensitive change: the check behind route data `reauth`
 * (guard.ts), for every route that names it (docs/sign-in.md, "Re-authentication"). Wrong
 * passwords count against the log-in failure limits (per email + client address, per address),
 * so a stolen access token cannot be used to guess the password. A wrong one is 403, not 401:
 * 401 means "refresh your access token and retry" to the client. An account without a password
 * is refused the same way, with `reason: "no-password"` (the guard asks it for a recent sign-in
 * instead and never gets here).
 */
import type { LoginRateLimiter } from '../auth/rate-limit.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { DB } from '../db/database.js';
import { forbidden, unauthorized } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import { ACCOUNT_COLUMNS, type AccountColumns } from './service.js';

export interface PasswordCheckDeps {
  db: DB;
  passwords: PasswordHasher;
  loginLimiter: LoginRateLimiter;
  log: Logger;
}

/**
 * The caller's account once `password` is its password; 403 `forbidden` (with a field error on
 * `field`) when it is not, 401 when the account is gone, 429 over the limits.
 */
export async function confirmPassword(
  deps: PasswordCheckDeps,
  accountId: string,
  password: string,
  clientAddress: string,
  field: string,
): Promise<AccountColumns> {
  const row = await deps.db
    .selectFrom('account')
    .select([...ACCOUNT_COLUMNS, 'password_hash'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw unauthorized('Account no longer exists');
  // made by a provider sign-in: its owner sets a password through forgot-password (a link to
  // the verified address) before a change that asks for one (docs/oidc.md)
  if (row.password_hash === null) {
    throw forbidden('This account has no password yet: set one with "Forgot password?" (a link is emailed to your address), then try again', {
      reason: 'no-password',
      errors: [{ path: `/${field}`, message: 'the account has no password yet' }],
    });
  }
  const passwordHash = row.password_hash;
  const attempt = await deps.loginLimiter.begin(row.email, clientAddress);
  let valid: boolean;
  try {
    valid = await deps.passwords.verify(passwordHash, password);
  } catch (err) {
    await attempt.refund();
    throw err;
  }
  if (!valid) {
    deps.log.info('account/password-check-failed', 'Wrong password given to confirm a change', { 'account-id': accountId });
    throw forbidden('The password is wrong', { errors: [{ path: `/${field}`, message: 'is wrong' }] });
  }
  await attempt.refund();
  const { password_hash: _hash, ...account } = row;
  return account;
}
