/**
 * Passkeys (WebAuthn) with @simplewebauthn/server: registering one to the signed-in account,
 * listing, renaming and removing them; signing in with one (discoverable credentials: the
 * authenticator names the account, no email is asked) is sign-in.ts, what both ceremonies
 * share ceremony.ts. docs/sign-in.md.
 *
 * - RP id and origin come from APP_URL (its host name, its origin).
 * - Challenges are stored (`webauthn_challenge`), so any instance can finish a ceremony another
 *   started; each is deleted by the statement that uses it (single-use) and expires in 5 minutes.
 * - User verification (PIN, biometrics) is required: a passkey sign-in is then two factors in
 *   one (something you have, something you know or are) and satisfies two-factor.
 * - @simplewebauthn/server (with its ASN.1 and CBOR stack, about 15–20 MB resident) loads at the
 *   first ceremony, not at start (docs/performance.md, "The embedded default's footprint").
 */
import { phrase } from '../i18n/messages.js';
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { DB } from '../db/database.js';
import type { PasswordCheckDeps } from '../account/password-check.js';
import type { SecurityNotices } from '../account/notices.js';
import type { PasskeyTable } from '../db/schema.js';
import { badRequest, conflict, notFound, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import { auditAccount } from '../mfa/audit.js';
import type { ClientOrigin } from '../audit/log.js';
import { CHALLENGE_TTL_MS, invalidChallenge, message, storeChallenge, transportsOf, userHandleOf, webAuthn, type WebAuthn } from './ceremony.js';
import type { Passkey } from './schemas.js';
import type { Selectable } from 'kysely';

/**
 * EdDSA, ES256, RS256: what authenticators use. Named, not the library's default, which probes
 * Node for post-quantum ML-DSA through an experimental WebCrypto API (a warning on stderr).
 */
const ALGORITHMS = [-8, -7, -257];

/** passkeys one account may have: each is a row and an entry in every registration's exclude list */
export const MAX_PASSKEYS = 20;

export interface PasskeyDeps extends PasswordCheckDeps {
  /** APP_URL: its origin is the one expected in client data, its host name the RP id */
  appUrl: string;
  /** shown by the authenticator (the product's name) */
  rpName: string;
  /** queues a security notice in the change's transaction (src/account/notices.ts) */
  notices?: SecurityNotices;
  /** sign-in ceremonies started per client address (PASSKEY_LIMIT_ADDRESS); null: off */
  signInLimiter: RateLimiterAbstract | null;
}

type PasskeyRow = Selectable<PasskeyTable>;

/** The challenge the client data carries (base64url), or undefined when it cannot be read. */
function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' && data.challenge.length <= 512 ? data.challenge : undefined;
  } catch {
    return undefined;
  }
}

export function toPasskey(row: Pick<PasskeyRow, 'id' | 'name' | 'created_at' | 'last_used_at'>): Passkey {
  return {
    id: row.id,
    name: row.name,
    'created-at': new Date(row.created_at).toISOString(),
    'last-used-at': row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}

/** An account's passkeys, oldest first (the list and the export). */
export async function listPasskeys(db: DB, accountId: string): Promise<Passkey[]> {
  const rows = await db
    .selectFrom('passkey')
    .select(['id', 'name', 'created_at', 'last_used_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toPasskey);
}

export class PasskeyService {
  private readonly rpId: string;
  private readonly origin: string;

  constructor(private readonly deps: PasskeyDeps) {
    const url = new URL(deps.appUrl);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  /**
   * Options for `navigator.credentials.create()`: a resident key with user verification, the
   * account's passkeys excluded. Needs the password (403; counted like a failed log-in): a
   * passkey is a way in that outlives any session, so a stolen access token alone must not add
   * one. The stored challenge carries that proof on to the verification.
   */
  async registrationOptions(user: AuthUser): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const account = await this.deps.db.selectFrom('account').select(['email', 'name']).where('id', '=', user.id).executeTakeFirst();
    if (!account) throw unauthorized('Account no longer exists');
    const existing = await this.deps.db.selectFrom('passkey').select(['credential_id', 'transports']).where('account_id', '=', user.id).execute();
    if (existing.length >= MAX_PASSKEYS) throw conflict(phrase('An account can have at most {max} passkeys; remove one first', { max: MAX_PASSKEYS }));
    const { generateRegistrationOptions } = await webAuthn();
    const options = await generateRegistrationOptions({
      rpName: this.deps.rpName,
      rpID: this.rpId,
      userName: account.email,
      userID: userHandleOf(user.id),
      userDisplayName: account.name ?? account.email,
      attestationType: 'none',
      timeout: CHALLENGE_TTL_MS,
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p.transports) })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await storeChallenge(this.deps.db, 'registration', options.challenge, user.id);
    return options;
  }

  /** Verifies a registration against the account's stored challenge (spent by this call) and keeps the passkey. */
  async register(user: AuthUser, response: RegistrationResponseJSON, name: string | undefined, origin: ClientOrigin): Promise<Passkey> {
    const challenge = challengeOf(response.response.clientDataJSON);
    if (!challenge) throw badRequest({ type: 'invalid-passkey-response', message: "The response's client data cannot be read" });
    const spent = await this.deps.db
      .deleteFrom('webauthn_challenge')
      .where('account_id', '=', user.id)
      .where('purpose', '=', 'registration')
      .where('challenge', '=', challenge)
      .returning('expires_at')
      .executeTakeFirst();
    if (!spent || spent.expires_at.getTime() <= Date.now()) throw invalidChallenge();
    const { verifyRegistrationResponse } = await webAuthn();
    let verification: Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>>;
    try {
      verification = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
    } catch (err) {
      throw badRequest({ type: 'invalid-passkey-response', message: phrase('The passkey could not be verified: {reason}', { reason: message(err) }) });
    }
    if (!verification.verified) throw badRequest({ type: 'invalid-passkey-response', message: 'The passkey could not be verified' });
    const info = verification.registrationInfo;
    try {
      const row = await this.deps.db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('passkey')
          .values({
            account_id: user.id,
            credential_id: info.credential.id,
            public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
            counter: info.credential.counter,
            transports: (info.credential.transports ?? response.response.transports ?? []).join(','),
            device_type: info.credentialDeviceType,
            backed_up: info.credentialBackedUp,
            name: name?.trim() ?? 'Passkey',
          })
          .returning(['id', 'name', 'created_at', 'last_used_at'])
          .executeTakeFirstOrThrow();
        await auditAccount(trx, {
          action: 'account.passkey-added',
          accountId: user.id,
          target: { type: 'passkey', id: inserted.id },
          details: { name: inserted.name, 'device-type': info.credentialDeviceType, 'backed-up': info.credentialBackedUp },
          origin,
        });
        await this.deps.notices?.(trx, user.id, 'passkey-added', origin, inserted.name);
        return inserted;
      });
      this.deps.log.info('account/passkey-added', 'Passkey registered', { 'account-id': user.id, 'passkey-id': row.id });
      return toPasskey(row);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw conflict('This passkey is registered already');
      throw err;
    }
  }

  list(user: AuthUser): Promise<Passkey[]> {
    return listPasskeys(this.deps.db, user.id);
  }

  /** 404 for an id that is not one of the caller's passkeys. */
  async rename(user: AuthUser, id: string, name: string, origin: ClientOrigin): Promise<Passkey> {
    return this.deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('passkey')
        .set({ name: name.trim() })
        .where('id', '=', id)
        .where('account_id', '=', user.id)
        .returning(['id', 'name', 'created_at', 'last_used_at'])
        .executeTakeFirst();
      if (!row) throw notFound('No such passkey');
      await auditAccount(trx, { action: 'account.passkey-renamed', accountId: user.id, target: { type: 'passkey', id }, details: { name: row.name }, origin });
      return toPasskey(row);
    });
  }

  /** 404 for an id that is not one of the caller's passkeys. */
  async remove(user: AuthUser, id: string, origin: ClientOrigin): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.deleteFrom('passkey').where('id', '=', id).where('account_id', '=', user.id).returning('name').executeTakeFirst();
      if (!row) throw notFound('No such passkey');
      await auditAccount(trx, { action: 'account.passkey-removed', accountId: user.id, target: { type: 'passkey', id }, details: { name: row.name }, origin });
      await this.deps.notices?.(trx, user.id, 'passkey-removed', origin, row.name);
    });
    this.deps.log.info('account/passkey-removed', 'Passkey removed', { 'account-id': user.id, 'passkey-id': id });
  }
}
