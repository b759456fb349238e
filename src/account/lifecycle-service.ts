/**
 * The account lifecycle around the password and the address: verification, forgot / reset
 * password, change password, change email and its confirmation, and the name. Every message is
 * queued in the transaction of the change that causes it (src/mail). See docs/api.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { appendAccountAudit, type ClientOrigin, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { AuthUser } from '../http/routes.js';
import { conflict, invalidToken, requestCoercion, unauthorized } from '../http/errors.js';
import { msg, phrase } from '../i18n/messages.js';
import { LOCALES, type Locale, supportedLocale } from '../shared/locales.js';
import type { Mail } from '../mail/index.js';
import type { NotificationService } from '../notifications/service.js';
import { newActionToken, retireTokens, storeActionToken, findUsableToken, useToken } from './action-tokens.js';
import { addressFirstProven, type AddressProofOutcome } from './address-proof.js';
import type { LifecycleRateLimiter } from './limits.js';
import type { PasswordCheckDeps } from './password-check.js';
import type { BreachedPasswords } from './breached-passwords.js';
import type { UserAccount } from './schemas.js';
import type { VerifiedAccount } from './lifecycle-schemas.js';
import type { AccountShaping } from './account-shaping.js';
import { ACCOUNT_COLUMNS, impersonatorOf, normalizeEmail, toUserAccount } from './service.js';

export interface LifecycleDeps extends PasswordCheckDeps {
  passwords: PasswordHasher;
  refreshTokens: RefreshTokens;
  mail: Pick<Mail, 'enqueue'>;
  notifications: Pick<NotificationService, 'notify'>;
  limits: LifecycleRateLimiter;
  /** API keys revoked by an address's first proof: forgotten by this instance at once (the others hear the trigger's notification) */
  onApiKeysRevoked?: (keyIds: readonly string[]) => void;
  /** who is a platform admin, for the account shape's `platform-admin` */
  shaping: AccountShaping;
  /** refuses a new password found in known breaches (breached-passwords.ts) */
  breaches?: Pick<BreachedPasswords, 'check'>;
  /** every change of address asks these (see {@link EmailChangePolicy}) */
  emailChangePolicies?: readonly EmailChangePolicy[];
}

/**
 * Asked before an account's address changes (when asked for, and again when confirmed): throws an
 * HttpError to refuse. Other modules plug them in (single sign-on: an organization that requires
 * it keeps its domains' accounts inside them).
 */
export type EmailChangePolicy = (account: { id: string; email: string }, newEmail: string) => Promise<void>;

/** Who opened a verification link, when it came with their session: that session stays (every other one ends at a first proof). */
export interface VerifyingClient {
  /** the access token's caller */
  user?: AuthUser;
  /** the refresh cookie (the same browser, signed in) */
  refreshToken?: string;
}

/** the pause between forgot-password's answer and its work, ms */
const AFTER_ANSWER_MS = 20;

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';
const emailTaken = () => conflict('An account with this email already exists', { field: 'new-email' });

export class AccountLifecycle {
  /** forgot-password work still running after its answer was sent (see forgotPassword) */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: LifecycleDeps) {}

  /**
   * Verifies the address from the emailed link. A first proof removes every credential added
   * before it (address-proof.ts): the session that opened the link stays, when the request came
   * with it (the access token, or the refresh cookie of the same browser); without one, the
   * password goes too and the answer carries a reset token to set a new one.
   */
  async verifyEmail(token: string, origin: RequestOrigin, client: VerifyingClient = {}): Promise<VerifiedAccount> {
    const cookieSession = client.refreshToken ? await this.deps.refreshTokens.liveSessionOf(client.refreshToken) : undefined;
    const { row, proof } = await this.deps.db.transaction().execute(async (trx) => {
      const used = await useToken(trx, 'verify-email', token);
      if (!used) throw invalidToken();
      // a link sent to an address the account no longer has verifies nothing
      const current = await trx.selectFrom('account').select('id').where('id', '=', used.accountId).where('email', '=', used.email).executeTakeFirst();
      if (!current) throw invalidToken();
      const keepSessionId =
        client.user?.id === current.id ? client.user.sessionId : cookieSession?.accountId === current.id ? cookieSession.familyId : undefined;
      const proof = await addressFirstProven(trx, this.deps, { accountId: current.id, via: 'verification', keepSessionId, origin });
      const row = await trx.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', current.id).executeTakeFirstOrThrow();
      await retireTokens(trx, row.id, 'verify-email');
      await appendAccountAudit(trx, { action: 'account.email-verified', accountId: row.id, details: { email: row.email }, origin });
      return { row, proof };
    });
    this.afterProof(row.id, proof);
    this.deps.log.info('account/email-verified', 'Email verified', { 'account-id': row.id });
    const account = toUserAccount(row, this.deps.shaping);
    return proof.passwordResetToken ? { ...account, 'password-reset-token': proof.passwordResetToken } : account;
  }

  /** What a committed first proof ended: its sessions refused and its keys forgotten here at once, and logged. */
  private afterProof(accountId: string, proof: AddressProofOutcome): void {
    this.deps.refreshTokens.sessionsEnded(proof.endedSessions);
    if (proof.revokedApiKeys.length > 0) this.deps.onApiKeysRevoked?.(proof.revokedApiKeys);
    if (proof.removed.length > 0) {
      this.deps.log.info('account/credentials-removed', 'The address was proven for the first time: what was added before is removed', {
        'account-id': accountId,
        removed: proof.removed.length,
        sessions: proof.endedSessions.length,
        'api-keys': proof.revokedApiKeys.length,
      });
    }
  }

  /** Sends a new verification link, unless the address is verified already (then nothing is sent). */
  async resendVerification(user: AuthUser, clientAddress: string): Promise<void> {
    await this.deps.limits.resend(user.id, clientAddress);
    const account = await this.deps.db.selectFrom('account').select(['id', 'email', 'name', 'email_verified']).where('id', '=', user.id).executeTakeFirst();
    if (!account) throw unauthorized('Account no longer exists');
    if (account.email_verified) return;
    const { token, hash } = newActionToken();
    await this.deps.db.transaction().execute(async (trx) => {
      await storeActionToken(trx, { purpose: 'verify-email', hash, accountId: account.id, email: account.email });
      await this.deps.mail.enqueue(trx, { kind: 'verify-email', to: account.email, data: { name: account.name, token } });
    });
  }

  /**
   * Answers the same, in the same time, whether the email has an account or not: the limits are
   * counted and a token is made and hashed in both cases, and nothing else is awaited before
   * the answer. The lookup, the token row and the message are written once the answer has been
   * handed to the socket (`answered`) and a short pause has passed, so the work never competes
   * with the answer's delivery (PGlite runs its queries on this thread). The work is tracked, so
   * a stop waits for it; a failure is logged. See docs/api.md.
   */
  async forgotPassword(email: string, client: ClientOrigin, answered: Promise<unknown>): Promise<void> {
    const address = normalizeEmail(email);
    await this.deps.limits.forgotPassword(address, client.ip);
    const { token, hash } = newActionToken();
    const work: Promise<void> = answered
      .then(() => sleep(AFTER_ANSWER_MS))
      .then(() => this.sendReset(address, token, hash, client))
      .catch((err: Error) =>
        this.deps.log.error('account/forgot-password-failed', `Could not queue a password reset: ${err.message}`, { class: err.constructor?.name }),
      )
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  /** Queues the link; the audit entry has no actor: anyone may ask (the per-email limit bounds how often). */
  private async sendReset(email: string, token: string, hash: string, origin: RequestOrigin): Promise<void> {
    const account = await this.deps.db.selectFrom('account').select(['id', 'email', 'name']).where('email', '=', email).executeTakeFirst();
    if (!account) return;
    await this.deps.db.transaction().execute(async (trx) => {
      await storeActionToken(trx, { purpose: 'reset-password', hash, accountId: account.id, email: account.email });
      await this.deps.mail.enqueue(trx, { kind: 'reset-password', to: account.email, data: { name: account.name, token } });
      await appendAccountAudit(trx, { action: 'account.password-reset-requested', accountId: account.id, actor: {}, origin });
    });
    this.deps.log.info('account/reset-requested', 'Password reset link queued', { 'account-id': account.id });
  }

  /** Waits for forgot-password work answered but not finished (on stop, and in tests). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Sets a new password from a reset link and ends every session of the account. */
  async resetPassword(token: string, password: string, origin: RequestOrigin): Promise<void> {
    // checked before hashing, so a bad token costs no hash; used atomically below
    if (!(await findUsableToken(this.deps.db, 'reset-password', token))) throw invalidToken();
    await this.deps.breaches?.check(password);
    const passwordHash = await this.deps.passwords.hash(password);
    const { accountId, proof } = await this.deps.db.transaction().execute(async (trx) => {
      const used = await useToken(trx, 'reset-password', token);
      if (!used) throw invalidToken();
      const row = await trx
        .updateTable('account')
        .set({ password_hash: passwordHash })
        .where('id', '=', used.accountId)
        .returning(['id', 'email'])
        .executeTakeFirstOrThrow();
      // the link reached the address the account still has: it is the owner's (a first proof
      // removes what was added before it: address-proof.ts)
      const proof = row.email === used.email ? await addressFirstProven(trx, this.deps, { accountId: row.id, via: 'password-reset', origin }) : undefined;
      await retireTokens(trx, row.id, 'reset-password');
      // the link's holder acted as the account; the sessions end right after (below)
      await appendAccountAudit(trx, { action: 'account.password-reset', accountId: row.id, origin });
      return { accountId: row.id, proof };
    });
    if (proof) this.afterProof(accountId, proof);
    const ended = await this.deps.refreshTokens.revokeAllForAccount(accountId);
    this.deps.log.info('account/password-reset', 'Password reset; every session ended', { 'account-id': accountId, sessions: ended.length });
  }

  /** Changes the password; every other session ends, the caller's (`sid`) stays; a notice is emailed. */
  async changePassword(user: AuthUser, input: { 'current-password'?: string; password: string }, client: ClientOrigin): Promise<void> {
    // re-authenticated by the route (`reauth`)
    const account = await this.accountOf(user);
    await this.deps.breaches?.check(input.password);
    const passwordHash = await this.deps.passwords.hash(input.password);
    await this.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('account').set({ password_hash: passwordHash }).where('id', '=', account.id).execute();
      // a reset link mailed before the change must not undo it
      await retireTokens(trx, account.id, 'reset-password');
      await this.deps.notifications.notify(trx, {
        kind: 'password-changed',
        to: { accounts: [account.id] },
        title: msg('Your password was changed'),
        body: msg('If it was not you, reset your password now: every session and connected app was signed out.'),
        url: '/settings/security',
        email: () => ({ kind: 'password-changed-notice', to: account.email, data: { name: account.name } }),
      });
      await appendAccountAudit(trx, { action: 'account.password-changed', accountId: account.id, origin: client });
    });
    // a new password also disconnects every app: a grant made with a stolen token must not outlive it
    const ended = await this.deps.refreshTokens.revokeAllForAccount(account.id, user.sessionId, { passwordChanged: true });
    this.deps.log.info('account/password-changed', 'Password changed; other sessions and connected apps ended', {
      'account-id': account.id,
      sessions: ended.length,
    });
  }

  /** Asks for an email change: a confirmation link to the new address, a notice to the old one. */
  async changeEmail(user: AuthUser, input: { password?: string; 'new-email': string }, client: ClientOrigin): Promise<void> {
    // re-authenticated by the route (`reauth`)
    const account = await this.accountOf(user);
    const newEmail = normalizeEmail(input['new-email']);
    if (newEmail === account.email) throw requestCoercion('body', [{ path: '/new-email', message: "is already the account's address" }]);
    const taken = await this.deps.db.selectFrom('account').select('id').where('email', '=', newEmail).executeTakeFirst();
    if (taken) throw emailTaken();
    await this.checkEmailChange(account, newEmail);
    const { token, hash } = newActionToken();
    await this.deps.db.transaction().execute(async (trx) => {
      // only the latest request can be confirmed
      await retireTokens(trx, account.id, 'email-change');
      await storeActionToken(trx, { purpose: 'email-change', hash, accountId: account.id, email: newEmail });
      await this.deps.mail.enqueue(trx, { kind: 'confirm-email-change', to: newEmail, data: { name: account.name, newEmail, token } });
      await this.deps.notifications.notify(trx, {
        kind: 'email-change-requested',
        to: { accounts: [account.id] },
        title: msg('A change of your email address was asked for'),
        body: phrase('The new address is {email}; it changes once that address confirms it.', { email: newEmail }),
        url: '/settings/profile',
        email: () => ({ kind: 'email-changed-notice', to: account.email, data: { name: account.name, newEmail } }),
      });
      await appendAccountAudit(trx, { action: 'account.email-change-requested', accountId: account.id, details: { 'new-email': newEmail }, origin: client });
    });
    this.deps.log.info('account/email-change-requested', 'Email change requested', { 'account-id': account.id });
  }

  private async checkEmailChange(account: { id: string; email: string }, newEmail: string): Promise<void> {
    for (const policy of this.deps.emailChangePolicies ?? []) await policy({ id: account.id, email: account.email }, newEmail);
  }

  private async accountOf(user: AuthUser): Promise<{ id: string; email: string; name: string | null }> {
    const account = await this.deps.db.selectFrom('account').select(['id', 'email', 'name']).where('id', '=', user.id).executeTakeFirst();
    if (!account) throw unauthorized('Account no longer exists');
    return account;
  }

  /** Confirms an email change from the link sent to the new address: the new address, verified. */
  async confirmEmail(token: string, origin: RequestOrigin): Promise<UserAccount> {
    // the policies again: the account may have come under one since it asked (checked before the transaction; used atomically below)
    const pending = await findUsableToken(this.deps.db, 'email-change', token);
    const current = pending && (await this.deps.db.selectFrom('account').select(['id', 'email']).where('id', '=', pending.accountId).executeTakeFirst());
    if (pending && current) await this.checkEmailChange(current, pending.email);
    try {
      return await this.deps.db.transaction().execute(async (trx) => {
        const used = await useToken(trx, 'email-change', token);
        if (!used) throw invalidToken();
        const taken = await trx.selectFrom('account').select('id').where('email', '=', used.email).where('id', '<>', used.accountId).executeTakeFirst();
        if (taken) throw emailTaken();
        const previous = await trx.selectFrom('account').select('email').where('id', '=', used.accountId).forUpdate().executeTakeFirstOrThrow();
        const row = await trx
          .updateTable('account')
          .set({ email: used.email, email_verified: true })
          .where('id', '=', used.accountId)
          .returning(ACCOUNT_COLUMNS)
          .executeTakeFirstOrThrow();
        // links sent to the old address verify or reset nothing any more
        await retireTokens(trx, row.id, 'verify-email');
        await retireTokens(trx, row.id, 'reset-password');
        await appendAccountAudit(trx, {
          action: 'account.email-changed',
          accountId: row.id,
          details: { 'previous-email': previous.email, email: row.email },
          origin,
        });
        this.deps.log.info('account/email-changed', 'Email changed', { 'account-id': row.id });
        return toUserAccount(row, this.deps.shaping);
      });
    } catch (err) {
      // the unique index decides when two confirmations race for one address
      if (isUniqueViolation(err)) throw emailTaken();
      throw err;
    }
  }

  /**
   * Sets what the body names: the name, trimmed (an empty one or null clears it), and the
   * language (a supported locale, a regional tag kept as its language, null to follow the browser).
   */
  async updateProfile(user: AuthUser, input: { name?: string | null; locale?: string | null }): Promise<UserAccount> {
    const changes: { name?: string | null; locale?: string | null } = {};
    if (input.name !== undefined) changes.name = input.name?.trim() || null;
    if (input.locale !== undefined) changes.locale = input.locale === null ? null : accountLocale(input.locale);
    const row = await this.deps.db.updateTable('account').set(changes).where('id', '=', user.id).returning(ACCOUNT_COLUMNS).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    return toUserAccount(row, this.deps.shaping, user.actor && (await impersonatorOf(this.deps.db, user.actor.id)));
  }
}

/** A locale an account may keep: a supported one, or the language of a regional tag; else 400 naming the supported ones. */
function accountLocale(tag: string): Locale {
  const locale = supportedLocale(tag);
  if (!locale) throw requestCoercion('body', [{ path: '/locale', message: phrase('must be one of {locales}', { locales: LOCALES.join(', ') }) }]);
  return locale;
}
