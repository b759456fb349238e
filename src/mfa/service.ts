/**
 * TOTP two-factor: setting it up (a secret, pending until a first code proves the app has it),
 * turning it on (backup codes) and off (password and a code), and the second step of log-in
 * (an mfa-token from the password step, then a code or a backup code). docs/sign-in.md.
 *
 * The mfa-token is random (256 bits) and only its SHA-256 is stored: single-use needs state
 * anyway, and a row can be spent at once on every instance and counts its wrong codes.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/log.js';
import type { SecretBox } from '../auth/secret-box.js';
import { hashToken } from '../auth/refresh-tokens.js';
import type { DatabaseSchema } from '../db/schema.js';
import { conflict, forbidden, requestCoercion, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { MfaRequired } from '../account/schemas.js';
import type { SecondFactor } from '../account/service.js';
import type { SecurityNotices } from '../account/notices.js';
import type { PasswordCheckDeps } from '../account/password-check.js';
import { auditAccount } from './audit.js';
import { newBackupCodes, normalizeBackupCode } from './backup-codes.js';
import type { SecondFactorRateLimiter } from './limits.js';
import type { MfaLogIn, RegenerateBackupCodes, SecondFactorInput, TwoFactorDisable, TwoFactorEnable, TwoFactorSetup } from './schemas.js';
import { newTotpSecret, otpauthUrl, totpStep } from './totp.js';

/** seconds an mfa-token stays valid */
export const MFA_TOKEN_TTL = 300;
/** wrong codes one mfa-token may take; then it is spent and the log-in starts over */
export const MFA_TOKEN_MAX_FAILURES = 5;

export type SecondFactorMethod = 'totp' | 'backup-code';

/** Where a request came from, with the address the limits count by. */
export type ClientOrigin = RequestOrigin & { ip: string };

export interface TwoFactorDeps extends PasswordCheckDeps {
  /** seals TOTP secrets (purpose `totp-secret`) */
  secrets: SecretBox;
  /** hashes backup codes (purpose `backup-code`) */
  backupCodes: SecretBox;
  limiter: SecondFactorRateLimiter;
  /** the issuer authenticator apps show beside the code (the product's name) */
  issuer: string;
  /** told about each failed second step (metrics) */
  onFailure?: () => void;
  /** queues a security notice in the change's transaction (src/account/notices.ts) */
  notices?: SecurityNotices;
}

type Executor = Kysely<DatabaseSchema>;

const wrongCode = (field: 'code' | 'backup-code') => ({ errors: [{ path: `/${field}`, message: 'is wrong or was already used' }] });

/** Exactly one of `code` and `backup-code`; 400 otherwise. */
function oneFactor(input: SecondFactorInput): 'code' | 'backup-code' {
  const given = (['code', 'backup-code'] as const).filter((k) => input[k] !== undefined && input[k] !== '');
  if (given.length !== 1) {
    throw requestCoercion(
      'body',
      [{ path: '/code', message: 'give one of code (from the authenticator app) or backup-code: exactly one' }],
      'Give one of code or backup-code',
    );
  }
  return given[0];
}

export class TwoFactorService implements SecondFactor {
  constructor(private readonly deps: TwoFactorDeps) {}

  /** A new pending secret (replacing a pending one); 409 while two-factor is on. */
  async setup(user: AuthUser): Promise<TwoFactorSetup> {
    const { db } = this.deps;
    const account = await db.selectFrom('account').select(['email', 'two_factor_enabled']).where('id', '=', user.id).executeTakeFirst();
    if (!account) throw unauthorized('Account no longer exists');
    if (account.two_factor_enabled) throw conflict('Two-factor authentication is already on; turn it off first to set up a new app');
    const secret = newTotpSecret();
    const sealed = this.deps.secrets.seal(secret, user.id);
    const stored = await db
      .insertInto('totp_credential')
      .values({ account_id: user.id, secret_sealed: sealed })
      .onConflict((oc) =>
        oc
          .column('account_id')
          .doUpdateSet({ secret_sealed: sealed, created_at: sql`now()`, enabled_at: null, last_used_step: null })
          .where('totp_credential.enabled_at', 'is', null),
      )
      .returning('account_id')
      .executeTakeFirst();
    // turned on between the check and the write (another tab)
    if (!stored) throw conflict('Two-factor authentication is already on; turn it off first to set up a new app');
    this.deps.log.info('account/2fa-setup', 'Two-factor setup started', { 'account-id': user.id });
    return { secret, 'otpauth-url': otpauthUrl(secret, this.deps.issuer, account.email) };
  }

  /**
   * Turns two-factor on once `code` comes from the pending secret and `password` is the
   * account's (403 otherwise); answers the backup codes, shown once. The password, because
   * whoever turns it on holds the secret and the codes: with a stolen access token alone that
   * would lock the owner out of their own account.
   */
  async enable(user: AuthUser, input: TwoFactorEnable, origin: ClientOrigin): Promise<string[]> {
    const code = input.code;
    const codes = newBackupCodes();
    const enabled = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('totp_credential')
        .select(['secret_sealed', 'enabled_at'])
        .where('account_id', '=', user.id)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw conflict('No two-factor setup is pending: start with POST /api/account/2fa/setup');
      if (row.enabled_at) throw conflict('Two-factor authentication is already on');
      const step = totpStep(this.deps.secrets.open(row.secret_sealed, user.id), code.replace(/\s/g, ''));
      if (step === undefined) return false;
      await trx.updateTable('totp_credential').set({ enabled_at: sql`now()`, last_used_step: step }).where('account_id', '=', user.id).execute();
      await trx.updateTable('account').set({ two_factor_enabled: true }).where('id', '=', user.id).execute();
      await this.replaceBackupCodes(trx, user.id, codes);
      await auditAccount(trx, { action: 'account.2fa-enabled', accountId: user.id, details: { 'backup-codes': codes.length }, origin });
      await this.deps.notices?.(trx, user.id, 'two-factor-enabled', origin);
      return true;
    });
    if (!enabled) throw forbidden("The code is wrong: check the app's clock, or set it up again", wrongCode('code'));
    this.deps.log.info('account/2fa-enabled', 'Two-factor authentication turned on', { 'account-id': user.id });
    return codes;
  }

  /** Turns two-factor off: the password and a code (or a backup code); 403 when either is wrong, 409 when it is off. */
  async disable(user: AuthUser, input: TwoFactorDisable, origin: ClientOrigin): Promise<void> {
    const field = oneFactor(input);
    const attempt = await this.deps.limiter.begin(user.id, origin.ip);
    let method: SecondFactorMethod | undefined;
    try {
      method = await this.deps.db.transaction().execute(async (trx) => {
        const account = await trx.selectFrom('account').select('two_factor_enabled').where('id', '=', user.id).forUpdate().executeTakeFirst();
        if (!account?.two_factor_enabled) throw conflict('Two-factor authentication is not on');
        const used = await this.consumeSecondFactor(trx, user.id, input);
        if (!used) return undefined;
        await trx.deleteFrom('totp_credential').where('account_id', '=', user.id).execute();
        await trx.deleteFrom('backup_code').where('account_id', '=', user.id).execute();
        await trx.deleteFrom('mfa_login').where('account_id', '=', user.id).execute();
        await trx.updateTable('account').set({ two_factor_enabled: false }).where('id', '=', user.id).execute();
        if (used === 'backup-code') await auditAccount(trx, { action: 'account.backup-code-used', accountId: user.id, origin });
        await auditAccount(trx, { action: 'account.2fa-disabled', accountId: user.id, details: { method: used }, origin });
        await this.deps.notices?.(trx, user.id, 'two-factor-disabled', origin);
        return used;
      });
    } catch (err) {
      await attempt.refund();
      throw err;
    }
    if (!method) throw forbidden('The code is wrong', wrongCode(field));
    await attempt.refund();
    this.deps.log.info('account/2fa-disabled', 'Two-factor authentication turned off', { 'account-id': user.id });
  }

  /**
   * New backup codes for an account with two-factor on, the old ones void: a current TOTP code
   * (a backup code will not do: whoever holds only those must not mint more). 403 for a wrong
   * code (counted against the second-factor limits, 429), 409 when two-factor is off.
   */
  async regenerateBackupCodes(user: AuthUser, input: RegenerateBackupCodes, origin: ClientOrigin): Promise<string[]> {
    const attempt = await this.deps.limiter.begin(user.id, origin.ip);
    const codes = newBackupCodes();
    let done: boolean;
    try {
      done = await this.deps.db.transaction().execute(async (trx) => {
        const account = await trx.selectFrom('account').select('two_factor_enabled').where('id', '=', user.id).forUpdate().executeTakeFirst();
        if (!account?.two_factor_enabled) throw conflict('Two-factor authentication is not on');
        if ((await this.consumeSecondFactor(trx, user.id, { code: input.code })) !== 'totp') return false;
        await this.replaceBackupCodes(trx, user.id, codes);
        await auditAccount(trx, { action: 'account.backup-codes-regenerated', accountId: user.id, details: { 'backup-codes': codes.length }, origin });
        await this.deps.notices?.(trx, user.id, 'backup-codes-regenerated', origin);
        return true;
      });
    } catch (err) {
      await attempt.refund();
      throw err;
    }
    if (!done) throw forbidden('The code is wrong: use a current code of your authenticator app', wrongCode('code'));
    await attempt.refund();
    this.deps.log.info('account/backup-codes-regenerated', 'Backup codes regenerated', { 'account-id': user.id });
    return codes;
  }

  private async replaceBackupCodes(trx: Executor, accountId: string, codes: string[]): Promise<void> {
    await trx.deleteFrom('backup_code').where('account_id', '=', accountId).execute();
    await trx
      .insertInto('backup_code')
      .values(codes.map((c) => ({ account_id: accountId, code_hash: this.deps.backupCodes.hash(normalizeBackupCode(c)) })))
      .execute();
  }

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
        const method = await this.consumeSecondFactor(trx, row.account_id, input);
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

  /**
   * Checks and spends a second factor inside `trx`: a TOTP code whose step is later than the
   * last one used (the row is locked, so two requests cannot both use one code), or an unused
   * backup code. Undefined when it is wrong.
   */
  private async consumeSecondFactor(trx: Executor, accountId: string, input: SecondFactorInput): Promise<SecondFactorMethod | undefined> {
    if (input.code) {
      const row = await trx
        .selectFrom('totp_credential')
        .select(['secret_sealed', 'last_used_step'])
        .where('account_id', '=', accountId)
        .where('enabled_at', 'is not', null)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return undefined;
      const step = totpStep(this.deps.secrets.open(row.secret_sealed, accountId), input.code.replace(/\s/g, ''));
      if (step === undefined || (row.last_used_step !== null && step <= Number(row.last_used_step))) return undefined;
      await trx.updateTable('totp_credential').set({ last_used_step: step }).where('account_id', '=', accountId).execute();
      return 'totp';
    }
    if (input['backup-code']) {
      const used = await trx
        .updateTable('backup_code')
        .set({ used_at: sql`now()` })
        .where('account_id', '=', accountId)
        .where('code_hash', '=', this.deps.backupCodes.hash(normalizeBackupCode(input['backup-code'])))
        .where('used_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return used ? 'backup-code' : undefined;
    }
    return undefined;
  }
}
