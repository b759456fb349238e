/**
 * Sign-up with an email and a password: the account, its personal organization, the audit entry
 * and the verification email commit together.
 */
import type { Locale } from '../shared/locales.js';
import { appendAudit, type ClientOrigin } from '../audit/log.js';
import { conflict, requestCoercion } from '../http/errors.js';
import { insertAccount, normalizeEmail, toUserAccount } from './account-shape.js';
import { newActionToken, storeActionToken } from './action-tokens.js';
import type { AccountShaping } from './account-shaping.js';
import type { CreateAccount, UserAccount } from './schemas.js';
import type { AccountDeps } from './service-types.js';

export type SignUpDeps = Pick<AccountDeps, 'db' | 'passwords' | 'signUpLimiter' | 'breaches' | 'mail' | 'log'>;

const emailTaken = () => conflict('An account with this email already exists', { field: 'email' });

/**
 * A taken email is answered 409 before any hashing: the 409 itself says the email is taken, so
 * spending a hash to hide it in the timing would hide nothing, and would only let a flood of
 * sign-ups for one email take the hashing slots log-in waits on (docs/security.md).
 */
export async function signUp(
  deps: SignUpDeps,
  admins: AccountShaping,
  input: CreateAccount,
  client: ClientOrigin,
  locale: Locale | null,
): Promise<UserAccount> {
  await deps.signUpLimiter.attempt(client.ip);
  if (input['confirm-password'] !== undefined && input['confirm-password'] !== input.password) {
    throw requestCoercion('body', [{ path: '/confirm-password', message: 'must equal password' }]);
  }
  const email = normalizeEmail(input.email);
  const taken = await deps.db.selectFrom('account').select('id').where('email', '=', email).executeTakeFirst();
  if (taken) throw emailTaken();
  await deps.breaches?.check(input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  try {
    const { token, hash } = newActionToken();
    const row = await deps.db.transaction().execute(async (trx) => {
      const inserted = await insertAccount(trx, { email, name: input.name ?? null, passwordHash, emailVerified: false, locale });
      await appendAudit(trx, {
        action: 'account.signed-up',
        organizationId: inserted.organizationId,
        accountId: inserted.id,
        actor: { accountId: inserted.id },
        target: { type: 'account', id: inserted.id },
        origin: client,
      });
      // the verification link is sent if and only if the account exists
      await storeActionToken(trx, { purpose: 'verify-email', hash, accountId: inserted.id, email });
      await deps.mail.enqueue(trx, { kind: 'verify-email', to: email, data: { name: inserted.name, token } });
      return inserted;
    });
    deps.log.info('account/signed-up', 'Account created', { 'account-id': row.id });
    return toUserAccount(row, admins);
  } catch (err) {
    // the unique index decides, so two sign-ups racing for one email cannot both win
    if ((err as { code?: string }).code === '23505') throw emailTaken();
    throw err;
  }
}
