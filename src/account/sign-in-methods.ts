/**
 * The ways an account can sign in: its password, its provider identities (src/oidc/) and its
 * passkeys (src/passkeys/). Removing one (unlinking an identity, deleting a
 * passkey) must leave at least one, or the account is locked out for good: this is the one
 * place that counts them, so a new method is added here once and every removal sees it.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { conflict } from '../http/errors.js';

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

export interface SignInMethods {
  password: boolean;
  /** ids of the account's provider identities */
  identities: string[];
  /** how many passkeys the account has (src/passkeys/): each signs in on its own */
  passkeys: number;
}

/**
 * The account's sign-in methods, with its row locked when `executor` is a transaction (`for
 * update`): two removals racing on one account are then decided one after the other, and the
 * second sees the first. Undefined when the account does not exist.
 */
export async function signInMethods(executor: Executor, accountId: string): Promise<SignInMethods | undefined> {
  const account = await executor.selectFrom('account').select('password_hash').where('id', '=', accountId).forUpdate().executeTakeFirst();
  if (!account) return undefined;
  const identities = await executor.selectFrom('account_identity').select('id').where('account_id', '=', accountId).execute();
  const passkeys = await executor
    .selectFrom('passkey')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { password: account.password_hash !== null, identities: identities.map((r) => r.id), passkeys: Number(passkeys.n) };
}

/** How many ways to sign in remain once `removing` is gone. */
export function remainingWays(methods: SignInMethods, removing: { identityId?: string }): number {
  return (methods.password ? 1 : 0) + methods.passkeys + methods.identities.filter((id) => id !== removing.identityId).length;
}

/** 409 `conflict` when removing `removing` would leave the account no way to sign in. */
export function assertAnotherWayToSignIn(methods: SignInMethods, removing: { identityId?: string }): void {
  if (remainingWays(methods, removing) === 0) {
    throw conflict("This is the account's last way to sign in: set a password (forgot password) or link another provider first", {
      reason: 'last-sign-in-method',
    });
  }
}
