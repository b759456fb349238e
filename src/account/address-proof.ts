/**
 * The first proof of an account's address, and what it removes (docs/security.md,
 * "Account pre-hijacking").
 *
 * Anyone can sign up with someone else's address and, until the address is proven, use the
 * account. Nothing lasting can be added before the proof any more (route data `verifiedEmail`,
 * src/account/guard.ts), but an account may hold credentials from before that rule, and its
 * sessions are lasting too (a refresh token lives 30 days). So when the address is proven for
 * the first time, by whichever way (a verification link, a reset link; later an email sign-in
 * link or a SAML assertion: each calls {@link addressFirstProven}), every credential added
 * before the proof is removed in the proof's own transaction: passkeys, provider identities,
 * two-factor (its secret, backup codes and pending log-ins), the API keys the account made,
 * a pending change of address, every other session, and the password, unless the
 * proof comes with a live session of the account (the verification link opened in the browser
 * that signed up: whoever set the password holds the address) or sets the password itself (a
 * reset). A removed password leaves a reset token, handed back to the page the proof landed on
 * so the person can set one at once; a proof that signs the person in with nothing to land on
 * (a SAML assertion: no reset token in any URL) leaves none, and the account's security page sets
 * one with that recent sign-in. The owner is told in an email what was removed; nothing removed,
 * no email.
 */
import { sql, type Kysely } from 'kysely';
import { english, msg, type Phrase } from '../i18n/messages.js';
import { REMOVED_WORDS } from '../mail/security-words.js';
import { mailWords } from '../mail/words.js';
import type { Locale } from '../shared/locales.js';
import { appendAccountAudit, appendAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { NotificationService } from '../notifications/service.js';
import { newActionToken, storeActionToken } from './action-tokens.js';

/** How the address was proven: named in the email and the audit entry. */
export type AddressProof = 'verification' | 'password-reset' | 'email-sign-in' | 'single-sign-on';

export interface AddressProofDeps {
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccountIn'>;
  notifications: Pick<NotificationService, 'notify'>;
}

export interface AddressProofInput {
  accountId: string;
  via: AddressProof;
  /** the session of whoever presented the proof (its own browser), kept; every other one ends */
  keepSessionId?: string;
  /** a removed password leaves a reset token for the page the proof lands on (the default); false: the proof signs in, the account sets a password itself */
  resetToken?: boolean;
  origin: RequestOrigin;
}

export interface AddressProofOutcome {
  /** the address was unverified until this proof */
  firstProof: boolean;
  /** what was removed, one line each as the email says it; empty when nothing was */
  removed: string[];
  /** sessions ended: `RefreshTokens.sessionsEnded` once the transaction has committed */
  endedSessions: string[];
  /** API keys revoked: forgotten by this instance once the transaction has committed */
  revokedApiKeys: string[];
  /** the password was removed: a reset token (1 hour, single use) for the page the proof landed on to set a new one */
  passwordResetToken?: string;
}

/** `a, b and c`, as `locale` writes a list, its first letter up: a notification's sentence */
function listIn(locale: Locale, items: string[]): string {
  const text = new Intl.ListFormat(locale, { type: 'conjunction' }).format(items);
  return `${text.charAt(0).toLocaleUpperCase(locale)}${text.slice(1)}.`;
}

const NOTHING: AddressProofOutcome = { firstProof: false, removed: [], endedSessions: [], revokedApiKeys: [] };

/**
 * Marks the account's address verified in `trx` (its row locked) and, when it was not verified
 * before, removes every credential added before this proof and queues the notice. Call it in
 * the transaction that uses the proof (the token, the assertion), so both commit together.
 */
export async function addressFirstProven(trx: Kysely<DatabaseSchema>, deps: AddressProofDeps, input: AddressProofInput): Promise<AddressProofOutcome> {
  const { accountId } = input;
  const account = await trx
    .selectFrom('account')
    .select(['email', 'name', 'email_verified', 'password_hash'])
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!account || account.email_verified) return NOTHING;
  // the password stays only when whoever set it shows the proof (its own session), or the proof sets it (a reset)
  const removePassword = account.password_hash !== null && input.via !== 'password-reset' && input.keepSessionId === undefined;
  await trx
    .updateTable('account')
    .set({ email_verified: true, two_factor_enabled: false, ...(removePassword ? { password_hash: null } : {}) })
    .where('id', '=', accountId)
    .execute();

  const removed: Phrase[] = [];
  let passwordResetToken: string | undefined;
  if (removePassword) removed.push(REMOVED_WORDS.password());
  if (removePassword && input.resetToken !== false) {
    const { token, hash } = newActionToken();
    await storeActionToken(trx, { purpose: 'reset-password', hash, accountId, email: account.email });
    passwordResetToken = token;
  }
  const passkeys = await trx.deleteFrom('passkey').where('account_id', '=', accountId).returning('id').execute();
  await trx.deleteFrom('webauthn_challenge').where('account_id', '=', accountId).execute();
  if (passkeys.length > 0) removed.push(REMOVED_WORDS.passkeys(passkeys.length));

  const identities = await trx.deleteFrom('account_identity').where('account_id', '=', accountId).returning('provider').execute();
  if (identities.length > 0) removed.push(REMOVED_WORDS.identities([...new Set(identities.map((i) => i.provider))].join(', ')));

  const totp = await trx.deleteFrom('totp_credential').where('account_id', '=', accountId).returning('enabled_at').execute();
  await trx.deleteFrom('backup_code').where('account_id', '=', accountId).execute();
  await trx.deleteFrom('mfa_login').where('account_id', '=', accountId).execute();
  if (totp.some((t) => t.enabled_at !== null)) removed.push(REMOVED_WORDS.twoFactor());
  else if (totp.length > 0) removed.push(REMOVED_WORDS.unfinishedTwoFactor());

  const keys = await trx
    .updateTable('api_key')
    .set({ revoked_at: sql`now()`, revoked_by: accountId })
    .where('created_by', '=', accountId)
    .where('revoked_at', 'is', null)
    .returning(['id', 'organization_id', 'name', 'role', 'prefix'])
    .execute();
  for (const key of keys) {
    await appendAudit(trx, {
      action: 'api-key.revoked',
      organizationId: key.organization_id,
      accountId,
      actor: { accountId },
      target: { type: 'api-key', id: key.id },
      details: { name: key.name, role: key.role, prefix: key.prefix, reason: 'address-proven' },
      origin: input.origin,
    });
  }
  if (keys.length > 0) removed.push(REMOVED_WORDS.apiKeys(keys.length));

  const emailChanges = await trx
    .updateTable('action_token')
    .set({ used_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('purpose', '=', 'email-change')
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('email')
    .execute();
  if (emailChanges.length > 0) removed.push(REMOVED_WORDS.emailChange(emailChanges[emailChanges.length - 1].email));

  const endedSessions = await deps.refreshTokens.revokeAllForAccountIn(trx, accountId, input.keepSessionId);
  if (endedSessions.length > 0) removed.push(REMOVED_WORDS.sessions(endedSessions.length, Boolean(input.keepSessionId)));

  if (removed.length > 0) {
    await appendAccountAudit(trx, {
      action: 'account.credentials-removed',
      accountId,
      origin: input.origin,
      details: {
        via: input.via,
        password: removePassword,
        passkeys: passkeys.length,
        identities: identities.length,
        'two-factor': totp.length > 0,
        'api-keys': keys.length,
        'email-change': emailChanges.length > 0,
        sessions: endedSessions.length,
      },
    });
    await deps.notifications.notify(trx, {
      kind: 'credentials-removed',
      to: { accounts: [input.accountId] },
      title: msg('Sign-in methods added before your address was proven were removed'),
      body: (locale) =>
        listIn(
          locale,
          removed.map((line) => mailWords(locale).t(line)),
        ),
      url: '/settings/security',
      email: () => ({ kind: 'credentials-removed-notice', to: account.email, data: { name: account.name, via: input.via, removed } }),
    });
  }
  return {
    firstProof: true,
    removed: removed.map(english),
    endedSessions,
    revokedApiKeys: keys.map((k) => k.id),
    ...(passwordResetToken ? { passwordResetToken } : {}),
  };
}
