/**
 * What both passkey ceremonies (registration in service.ts, sign-in in sign-in.ts) share: the
 * challenge's life and its storage, the user handle, and the WebAuthn library, loaded at the
 * first ceremony (docs/performance.md, "The embedded default's footprint").
 */
import type { AuthenticatorTransport } from '@simplewebauthn/server';
import type { DB } from '../db/database.js';
import type { WebAuthnPurpose } from '../db/schema.js';
import { badRequest } from '../http/errors.js';

/** how long a ceremony may take, ms: the challenge's life and the browser's timeout */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export type WebAuthn = typeof import('@simplewebauthn/server');
/** the library, loaded at its first use; Node keeps it from then on */
export const webAuthn = (): Promise<WebAuthn> => import('@simplewebauthn/server');

export const invalidChallenge = () =>
  badRequest({
    type: 'invalid-challenge',
    message: 'This passkey request expired or was already used; start again',
  });

/** The WebAuthn user handle of an account: its UUID's 16 bytes (no personal data). */
export function userHandleOf(accountId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(accountId.replace(/-/g, ''), 'hex'));
}

export const message = (err: unknown) => (err instanceof Error ? err.message : 'verification failed').slice(0, 300);

/** Stores a ceremony's challenge and answers its id. */
export async function storeChallenge(db: DB, purpose: WebAuthnPurpose, challenge: string, accountId: string | null): Promise<string> {
  return db.transaction().execute(async (trx) => {
    // expired ceremonies go as new ones start; an account has one registration under way at a time
    await trx.deleteFrom('webauthn_challenge').where('expires_at', '<', new Date()).execute();
    if (accountId) await trx.deleteFrom('webauthn_challenge').where('account_id', '=', accountId).where('purpose', '=', purpose).execute();
    const row = await trx
      .insertInto('webauthn_challenge')
      .values({ purpose, challenge, account_id: accountId, expires_at: new Date(Date.now() + CHALLENGE_TTL_MS) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

export function transportsOf(stored: string): AuthenticatorTransport[] | undefined {
  return stored ? (stored.split(',') as AuthenticatorTransport[]) : undefined;
}
