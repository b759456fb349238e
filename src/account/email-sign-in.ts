/**
 * Email sign-in (docs/sign-in.md): a message with a link and a 6-digit code, single-use, 15
 * minutes, the first factor of a sign-in.
 *
 * - Asking answers the same, in the same time, whatever the address: the limits are counted and
 *   the token and code are made in every case, and nothing else is awaited before the answer.
 *   The lookup, the row and the message are written once the answer has been handed to the
 *   socket (as forgot-password does, lifecycle-service.ts), so no timing tells whether an
 *   account uses the address. An unknown address gets a message only when sign-up by email is on.
 * - Using it proves the address: a first proof removes what was added before it, the password
 *   included (address-proof.ts; the answer then carries a reset token to set a new one), and an
 *   unknown address gets its account here, verified.
 * - A wrong code counts against its message: the fifth voids it (link and code), so a message
 *   gives at most five guesses at one in a million; and against its address across messages
 *   (EMAIL_SIGN_IN_CODE_FAILURES, 20 a day: then 429 for codes, the link still works), so new
 *   messages do not bring new guesses. `/verify` is limited per client address too.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { appendAccountAudit, type ClientOrigin, type RequestOrigin } from '../audit/log.js';
import { hashToken, type RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { HttpError, invalidToken, requestCoercion } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import { LINK_LIFETIME_SECONDS, type Mail } from '../mail/index.js';
import type { NotificationService } from '../notifications/service.js';
import { newActionToken } from './action-tokens.js';
import { addressFirstProven, type AddressProofOutcome } from './address-proof.js';
import type { LifecycleRateLimiter } from './limits.js';
import type { SignInClient } from './devices.js';
import { insertAccount, normalizeEmail, type AccountService, type SecondFactorPending, type Session } from './service.js';

/** wrong codes one message takes; the last one voids it */
export const EMAIL_CODE_MAX_FAILURES = 5;
/** the pause between the answer and the work, ms */
const AFTER_ANSWER_MS = 20;

export interface EmailSignInDeps {
  db: DB;
  mail: Pick<Mail, 'enqueue'>;
  notifications: Pick<NotificationService, 'notify'>;
  log: Logger;
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccountIn' | 'sessionsEnded'>;
  limits: LifecycleRateLimiter;
  accounts: AccountService;
  /** EMAIL_SIGN_UP: an address without an account gets one (true), or nothing is sent (false) */
  signUp: boolean;
  onApiKeysRevoked?: (keyIds: readonly string[]) => void;
}

export type EmailSignInProof = { token: string } | { email: string; code: string };

type ProofOutcome = { kind: 'invalid-token' } | { kind: 'wrong-code' } | { kind: 'ok'; accountId: string; proof: AddressProofOutcome };

const codeHash = (code: string) => hashToken(`email-sign-in-code:${code}`);

/** 401 `invalid-code`: the code is wrong (or its message is spent); the message survives four of these. */
function invalidCode(): HttpError {
  return new HttpError(401, {
    type: 'invalid-code',
    message: 'The code is wrong, or it expired: check the latest message, or ask for a new one',
    errors: [{ path: '/code', message: 'is wrong, used or expired' }],
  });
}

export class EmailSignIn {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: EmailSignInDeps) {}

  /** Queues the message, after the answer (see the file's comment); 429 over the limits. */
  async start(email: string, client: ClientOrigin, answered: Promise<unknown>): Promise<void> {
    const address = normalizeEmail(email);
    await this.deps.limits.emailSignIn(address, client.ip);
    const { token, hash } = newActionToken();
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const work: Promise<void> = answered
      .then(() => sleep(AFTER_ANSWER_MS))
      .then(() => this.send(address, hash, token, code, client))
      .catch((err: Error) =>
        this.deps.log.error('account/email-sign-in-failed', `Could not queue an email sign-in: ${err.message}`, { class: err.constructor?.name }),
      )
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  private async send(email: string, tokenHash: string, token: string, code: string, origin: RequestOrigin): Promise<void> {
    const account = await this.deps.db.selectFrom('account').select(['id', 'name']).where('email', '=', email).executeTakeFirst();
    if (!account && !this.deps.signUp) return;
    await this.deps.db.transaction().execute(async (trx) => {
      // spent and expired messages go as new ones come: the table stays the size of the sign-ins under way
      await trx.deleteFrom('email_sign_in').where('expires_at', '<', sql<Date>`now()`).execute();
      await trx
        .insertInto('email_sign_in')
        .values({
          email,
          token_hash: tokenHash,
          code_hash: codeHash(code),
          expires_at: new Date(Date.now() + LINK_LIFETIME_SECONDS['email-sign-in'] * 1000),
        })
        .execute();
      await this.deps.mail.enqueue(trx, { kind: 'email-sign-in', to: email, data: { name: account?.name ?? null, token, code } });
      if (account) await appendAccountAudit(trx, { action: 'account.email-sign-in-requested', accountId: account.id, actor: {}, origin });
    });
    this.deps.log.info('account/email-sign-in-sent', 'Email sign-in queued', { 'account-id': account?.id ?? null });
  }

  /** Waits for messages answered but not yet queued (on stop, and in tests). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Uses a message's link token or its code: the address is proven (an unknown one gets its
   * account when sign-up is on), then on to the second factor or a session like every first
   * factor. 400 `invalid-token` for a bad, used or expired token; 401 `invalid-code` for a
   * wrong code (the fifth voids the message).
   */
  async verify(proof: EmailSignInProof, client: SignInClient): Promise<Session | SecondFactorPending> {
    await this.deps.limits.emailSignInVerify(client.ip);
    // a wrong code counts for its address whichever message it was meant for: taken now, given back unless wrong
    const codeAttempt = 'code' in proof ? await this.deps.limits.emailCode(normalizeEmail(proof.email)) : undefined;
    let outcome: ProofOutcome;
    try {
      outcome = await this.check(proof, client);
    } catch (err) {
      await codeAttempt?.refund();
      throw err;
    }
    if (outcome.kind !== 'wrong-code') await codeAttempt?.refund();
    if (outcome.kind === 'invalid-token') throw invalidToken('This sign-in link is invalid, was already used or has expired: ask for a new one');
    if (outcome.kind === 'wrong-code') {
      this.deps.log.info('account/email-code-failed', 'Wrong email sign-in code');
      throw invalidCode();
    }
    this.deps.refreshTokens.sessionsEnded(outcome.proof.endedSessions);
    if (outcome.proof.revokedApiKeys.length > 0) this.deps.onApiKeysRevoked?.(outcome.proof.revokedApiKeys);
    const session = await this.deps.accounts.firstFactorPassed(outcome.accountId, 'email-link', client, { method: 'email-link' });
    // a password set before this first proof is gone: the page can offer to set one at once
    const resetToken = outcome.proof.passwordResetToken;
    return resetToken && 'body' in session ? { ...session, body: { ...session.body, 'password-reset-token': resetToken } } : session;
  }

  /** The proof checked and used, in one transaction: the message spent and the address proven, or why not. */
  private check(proof: EmailSignInProof, client: SignInClient): Promise<ProofOutcome> {
    return this.deps.db.transaction().execute(async (trx): Promise<ProofOutcome> => {
      let row: { id: string; email: string; code_hash: string; failures: number } | undefined;
      const live = trx
        .selectFrom('email_sign_in')
        .select(['id', 'email', 'code_hash', 'failures'])
        .where('used_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`);
      if ('token' in proof) {
        row = await live.where('token_hash', '=', hashToken(proof.token)).forUpdate().executeTakeFirst();
        if (!row) return { kind: 'invalid-token' };
      } else {
        // the latest message to the address: an older one's code no longer counts once a new one is asked for
        row = await live.where('email', '=', normalizeEmail(proof.email)).orderBy('created_at', 'desc').limit(1).forUpdate().executeTakeFirst();
        if (!row) return { kind: 'wrong-code' };
        if (row.code_hash !== codeHash(proof.code.replace(/\s/g, ''))) {
          const failures = row.failures + 1;
          await trx
            .updateTable('email_sign_in')
            .set({ failures, ...(failures >= EMAIL_CODE_MAX_FAILURES ? { used_at: sql`now()` } : {}) })
            .where('id', '=', row.id)
            .execute();
          return { kind: 'wrong-code' };
        }
      }
      // single use: this message and every earlier one still live for the address
      await trx.updateTable('email_sign_in').set({ used_at: sql`now()` }).where('email', '=', row.email).where('used_at', 'is', null).execute();
      let account = await trx.selectFrom('account').select('id').where('email', '=', row.email).forUpdate().executeTakeFirst();
      if (!account) {
        if (!this.deps.signUp) return { kind: 'invalid-token' };
        const inserted = await insertAccount(trx, { email: row.email, name: null, passwordHash: null, emailVerified: false });
        await appendAccountAudit(trx, { action: 'account.signed-up', accountId: inserted.id, details: { method: 'email-link' }, origin: client });
        account = { id: inserted.id };
      }
      const proven = await addressFirstProven(trx, this.deps, { accountId: account.id, via: 'email-sign-in', origin: client });
      return { kind: 'ok', accountId: account.id, proof: proven };
    });
  }
}

/** `{token}`, or `{email, code}`: exactly one form; 400 otherwise. */
export function emailSignInProof(body: { token?: string; email?: string; code?: string }): EmailSignInProof {
  if (body.token !== undefined && body.email === undefined && body.code === undefined) return { token: body.token };
  if (body.token === undefined && body.email !== undefined && body.code !== undefined) return { email: body.email, code: body.code };
  throw requestCoercion(
    'body',
    [{ path: '/token', message: 'give token (from the link), or email and code: one of the two' }],
    "Give the link's token, or the email and the code",
  );
}
