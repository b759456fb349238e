/**
 * Signing in with a passkey: discoverable credentials, so the authenticator names the account
 * and no email is asked (docs/sign-in.md). Registering and managing passkeys is service.ts.
 *
 * - The signature counter must grow when the authenticator keeps one (a cloned key shows up as
 *   a counter that did not); synced passkeys report 0 throughout.
 */
import { msg } from '../i18n/messages.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { sql } from 'kysely';
import { addressKey, take } from '../auth/rate-limit.js';
import { unauthorized } from '../http/errors.js';
import { auditAccount } from '../mfa/audit.js';
import type { ClientOrigin } from '../audit/log.js';
import { CHALLENGE_TTL_MS, invalidChallenge, message, storeChallenge, transportsOf, userHandleOf, webAuthn, type WebAuthn } from './ceremony.js';
import type { PasskeySignIn } from './schemas.js';
import type { PasskeyDeps } from './service.js';

/** The one answer of a passkey sign-in that fails after its challenge (unknown, mismatched or unverifiable passkey). */
export const PASSKEY_REFUSED = msg('This passkey cannot sign in here');

export type PasskeySignInDeps = Pick<PasskeyDeps, 'db' | 'log' | 'appUrl' | 'signInLimiter'>;

export class PasskeySignInService {
  private readonly rpId: string;
  private readonly origin: string;

  constructor(private readonly deps: PasskeySignInDeps) {
    const url = new URL(deps.appUrl);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  /** Starts a sign-in: options for `navigator.credentials.get()` with no credentials listed (the authenticator offers its own). */
  async signInOptions(clientAddress: string): Promise<{ 'challenge-id': string; options: Awaited<ReturnType<WebAuthn['generateAuthenticationOptions']>> }> {
    if (this.deps.signInLimiter) await take(this.deps.signInLimiter, addressKey(clientAddress));
    const { generateAuthenticationOptions } = await webAuthn();
    const options = await generateAuthenticationOptions({ rpID: this.rpId, userVerification: 'required', timeout: CHALLENGE_TTL_MS });
    return { 'challenge-id': await storeChallenge(this.deps.db, 'authentication', options.challenge, null), options };
  }

  /**
   * Verifies a sign-in against its challenge (spent by this call, whatever the outcome) and the
   * stored passkey; answers the account to open a session for. 400 for an unknown, used or
   * expired challenge; 401 for a passkey that is not registered or does not verify.
   */
  async signIn(input: PasskeySignIn, origin: ClientOrigin): Promise<string> {
    const spent = await this.deps.db
      .deleteFrom('webauthn_challenge')
      .where('id', '=', input['challenge-id'])
      .where('purpose', '=', 'authentication')
      .returning(['challenge', 'expires_at'])
      .executeTakeFirst();
    if (!spent || spent.expires_at.getTime() <= Date.now()) throw invalidChallenge();
    const response = input.response as AuthenticationResponseJSON;
    const passkey = await this.deps.db.selectFrom('passkey').selectAll().where('credential_id', '=', response.id).executeTakeFirst();
    // one answer for every failure: a reason in the answer would tell anyone whether a
    // credential id is registered here; the log keeps it
    const refuse = (reason: string) => {
      this.deps.log.info('account/passkey-sign-in-failed', 'Passkey sign-in refused', { reason, 'passkey-id': passkey?.id ?? null });
      return unauthorized(PASSKEY_REFUSED);
    };
    if (!passkey) throw refuse('unknown-credential');
    const handle = response.response.userHandle;
    if (handle !== undefined && handle !== Buffer.from(userHandleOf(passkey.account_id)).toString('base64url')) throw refuse('user-handle-mismatch');
    const { verifyAuthenticationResponse } = await webAuthn();
    let verification: Awaited<ReturnType<WebAuthn['verifyAuthenticationResponse']>>;
    try {
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: spent.challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: true,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
          counter: Number(passkey.counter),
          transports: transportsOf(passkey.transports),
        },
      });
    } catch (err) {
      // a counter that did not grow lands here too (a cloned authenticator)
      this.deps.log.warn('account/passkey-verification-failed', `Passkey assertion refused: ${message(err)}`, { 'passkey-id': passkey.id });
      throw refuse('verification-failed');
    }
    if (!verification.verified) throw refuse('verification-failed');
    const { newCounter } = verification.authenticationInfo;
    await this.deps.db.transaction().execute(async (trx) => {
      // the counter only moves forward, even if two sign-ins with one authenticator race
      await trx
        .updateTable('passkey')
        .set({ counter: sql<string>`greatest(counter, ${newCounter})`, last_used_at: sql`now()` })
        .where('id', '=', passkey.id)
        .execute();
      await auditAccount(trx, {
        action: 'account.logged-in',
        accountId: passkey.account_id,
        target: { type: 'passkey', id: passkey.id },
        details: { method: 'passkey' },
        origin,
      });
    });
    this.deps.log.info('account/logged-in', 'Logged in with a passkey', { 'account-id': passkey.account_id, method: 'passkey' });
    return passkey.account_id;
  }
}
