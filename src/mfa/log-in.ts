/**
 * The second step of a password log-in with two-factor on: an mfa-token from the password step
 * (log-in calls {@link MfaLogInService.challenge}), then a code or a backup code. docs/sign-in.md.
 *
 * The mfa-token is random (256 bits) and only its SHA-256 is stored: single-use needs state
 * anyway, and a row can be spent at once on every instance and counts its wrong codes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { hashToken } from '../auth/refresh-tokens.js';
import { unauthorized } from '../http/errors.js';
import type { MfaRequired } from '../account/schemas.js';
import type { SecondFactor } from '../account/service.js';
import { auditAccount } from './audit.js';
import type { MfaLogIn } from './schemas.js';
import { consumeSecondFactor, oneFactor, wrongCode, type SecondFactorMethod } from './second-factor.js';
import type { ClientOrigin } from '../audit/log.js';
import type { TwoFactorDeps } from './service.js';

/** seconds an mfa-token stays valid */
export const MFA_TOKEN_TTL = 300;
/** wrong codes one mfa-token may take; then it is spent and the log-in starts over */
export const MFA_TOKEN_MAX_FAILURES = 5;

export class MfaLogInService implements SecondFactor {
  constructor(private readonly deps: TwoFactorDeps) {}

  /** The second step of a log-in whose password was right: a fresh mfa-token (log-in calls this). */
  async challenge(accountId: string): Promise<MfaRequired> {
    const token = randomBytes(32).toString('base64url');
    // spent and expired rows go as new ones come: the table stays the size of the log-ins under way
    await this.deps.db.deleteFrom('mfa_login').where('expires_at', '<', new Date()).execute();
    await this.deps.db
      .insertInto('mfa_login')
      .values({
        account_id: accountId,
        token_hash: hashToken(token),
        expires_at: new Date(Date.now() + MFA_TOKEN_TTL * 1000),
      })
      .execute();
    this.deps.log.info('account/mfa-required', 'Password right; waiting for the second factor', { 'account-id': accountId });
    return { 'mfa-required': true, 'mfa-token': token, 'expires-in': MFA_TOKEN_TTL };
  }

  /**
   * Completes a log-in with its mfa-token and a code or backup code; answers the account to
   * open a session for. 401 for a bad, used or expired token and for a wrong code (the token
   * survives a few wrong codes); 429 over the limits.
   */
  async completeLogIn(input: MfaLogIn, origin: ClientOrigin): Promise<{ accountId: string; method: SecondFactorMethod }> {
    const field = oneFactor(input);
    const tokenHash = hashToken(input['mfa-token']);
    const { db } = this.deps;
    const pending = await db.selectFrom('mfa_login').select(['account_id', 'used_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
    // a dead token guesses no code: it counts against the address only
    const live = pending && !pending.used_at && pending.expires_at.getTime() > Date.now();
    const attempt = await this.deps.limiter.begin(live ? pending.account_id : undefined, origin.ip);
    type Outcome = { kind: 'invalid-token' } | { kind: 'wrong-code'; accountId: string } | { kind: 'ok'; accountId: string; method: SecondFactorMethod };
    let outcome: Outcome;
    try {
      outcome = await db.transaction().execute(async (trx): Promise<Outcome> => {
        const row = await trx
          .selectFrom('mfa_login')
          .select(['id', 'account_id', 'expires_at', 'used_at', 'failures'])
          .where('token_hash', '=', tokenHash)
          .forUpdate()
          .executeTakeFirst();
        if (!row || row.used_at || row.expires_at.getTime() <= Date.now()) return { kind: 'invalid-token' };
        const method = await consumeSecondFactor(this.deps, trx, row.account_id, input);
        if (!method) {
          const failures = row.failures + 1;
          await trx
            .updateTable('mfa_login')
            .set({ failures, ...(failures >= MFA_TOKEN_MAX_FAILURES ? { used_at: sql`now()` } : {}) })
            .where('id', '=', row.id)
            .execute();
          await auditAccount(trx, {
            action: 'account.log-in-failed',
            accountId: row.account_id,
            details: { method: field === 'code' ? 'totp' : 'backup-code', reason: 'wrong-code' },
            origin,
          });
          return { kind: 'wrong-code', accountId: row.account_id };
        }
        await trx.updateTable('mfa_login').set({ used_at: sql`now()` }).where('id', '=', row.id).execute();
        if (method === 'backup-code') await auditAccount(trx, { action: 'account.backup-code-used', accountId: row.account_id, origin });
        await auditAccount(trx, { action: 'account.logged-in', accountId: row.account_id, details: { method }, origin });
        return { kind: 'ok', accountId: row.account_id, method };
      });
    } catch (err) {
      await attempt.refund();
      throw err;
    }
    if (outcome.kind === 'invalid-token') {
      this.deps.onFailure?.();
      throw unauthorized('This log-in expired or was already completed; log in again', {
        errors: [{ path: '/mfa-token', message: 'is invalid, used or expired' }],
      });
    }
    if (outcome.kind === 'wrong-code') {
      this.deps.log.info('account/mfa-failed', 'Wrong second-factor code', { 'account-id': outcome.accountId });
      this.deps.onFailure?.();
      throw unauthorized('The code is wrong', wrongCode(field));
    }
    await attempt.refund();
    this.deps.log.info('account/logged-in', 'Logged in with a second factor', { 'account-id': outcome.accountId, method: outcome.method });
    return { accountId: outcome.accountId, method: outcome.method };
  }
}
