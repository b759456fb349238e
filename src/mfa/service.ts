/**
 * TOTP two-factor: setting it up (a secret, pending until a first code proves the app has it),
 * turning it on (backup codes) and off (password and a code), and new backup codes. The second
 * step of log-in is log-in.ts. docs/sign-in.md.
 */
import { sql, type Kysely } from 'kysely';
import type { ClientOrigin } from '../audit/log.js';
import type { DatabaseSchema } from '../db/schema.js';
import { conflict, forbidden, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { SecurityNotices } from '../account/notices.js';
import type { PasswordCheckDeps } from '../account/password-check.js';
import { auditAccount } from './audit.js';
import { newBackupCodes, normalizeBackupCode } from './backup-codes.js';
import type { SecondFactorRateLimiter } from './limits.js';
import type { RegenerateBackupCodes, TwoFactorDisable, TwoFactorEnable, TwoFactorSetup } from './schemas.js';
import { consumeSecondFactor, oneFactor, wrongCode, type SecondFactorKeys, type SecondFactorMethod } from './second-factor.js';
import { newTotpSecret, otpauthQrCode, otpauthUrl, totpStep } from './totp.js';

export interface TwoFactorDeps extends PasswordCheckDeps, SecondFactorKeys {
  limiter: SecondFactorRateLimiter;
  /** the issuer authenticator apps show beside the code (the product's name) */
  issuer: string;
  /** told about each failed second step (metrics) */
  onFailure?: () => void;
  /** queues a security notice in the change's transaction (src/account/notices.ts) */
  notices?: SecurityNotices;
}

type Executor = Kysely<DatabaseSchema>;

export class TwoFactorService {
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
    const url = otpauthUrl(secret, this.deps.issuer, account.email);
    return { secret, 'otpauth-url': url, 'otpauth-qr': otpauthQrCode(url) };
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
        const used = await consumeSecondFactor(this.deps, trx, user.id, input);
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
        if ((await consumeSecondFactor(this.deps, trx, user.id, { code: input.code })) !== 'totp') return false;
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
}
