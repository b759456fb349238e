/**
 * Checking and spending a second factor (a TOTP code or a backup code), shared by turning
 * two-factor off and its backup codes over (service.ts) and by the log-in's second step
 * (log-in.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { SecretBox } from '../auth/secret-box.js';
import type { DatabaseSchema } from '../db/schema.js';
import { requestCoercion } from '../http/errors.js';
import { normalizeBackupCode } from './backup-codes.js';
import type { SecondFactorInput } from './schemas.js';
import { totpStep } from './totp.js';

export type SecondFactorMethod = 'totp' | 'backup-code';

/** what a factor is checked with */
export interface SecondFactorKeys {
  /** seals TOTP secrets (purpose `totp-secret`) */
  secrets: SecretBox;
  /** hashes backup codes (purpose `backup-code`) */
  backupCodes: SecretBox;
}

type Executor = Kysely<DatabaseSchema>;

export const wrongCode = (field: 'code' | 'backup-code') => ({ errors: [{ path: `/${field}`, message: 'is wrong or was already used' }] });

/** Exactly one of `code` and `backup-code`; 400 otherwise. */
export function oneFactor(input: SecondFactorInput): 'code' | 'backup-code' {
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

/**
 * Checks and spends a second factor inside `trx`: a TOTP code whose step is later than the
 * last one used (the row is locked, so two requests cannot both use one code), or an unused
 * backup code. Undefined when it is wrong.
 */
export async function consumeSecondFactor(
  keys: SecondFactorKeys,
  trx: Executor,
  accountId: string,
  input: SecondFactorInput,
): Promise<SecondFactorMethod | undefined> {
  if (input.code) {
    const row = await trx
      .selectFrom('totp_credential')
      .select(['secret_sealed', 'last_used_step'])
      .where('account_id', '=', accountId)
      .where('enabled_at', 'is not', null)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return undefined;
    const step = totpStep(keys.secrets.open(row.secret_sealed, accountId), input.code.replace(/\s/g, ''));
    if (step === undefined || (row.last_used_step !== null && step <= Number(row.last_used_step))) return undefined;
    await trx.updateTable('totp_credential').set({ last_used_step: step }).where('account_id', '=', accountId).execute();
    return 'totp';
  }
  if (input['backup-code']) {
    const used = await trx
      .updateTable('backup_code')
      .set({ used_at: sql`now()` })
      .where('account_id', '=', accountId)
      .where('code_hash', '=', keys.backupCodes.hash(normalizeBackupCode(input['backup-code'])))
      .where('used_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return used ? 'backup-code' : undefined;
  }
  return undefined;
}
