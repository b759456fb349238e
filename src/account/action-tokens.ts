/**
 * Emailed single-use tokens (docs/email.md): 256 random bits, sent only in the link, stored
 * as a SHA-256 hash with the purpose, the account, the address it was sent to and an expiry
 * (the lifetimes the messages state, LINK_LIFETIME_SECONDS). Using one is one conditional
 * UPDATE, so two requests racing with the same token cannot both succeed.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { hashToken } from '../auth/refresh-tokens.js';
import type { ActionTokenPurpose, DatabaseSchema } from '../db/schema.js';
import { LINK_LIFETIME_SECONDS } from '../mail/index.js';

export type AccountActionPurpose = Exclude<ActionTokenPurpose, 'invitation'>;

type Executor = Kysely<DatabaseSchema>;

const LIFETIME_SECONDS: Record<AccountActionPurpose, number> = {
  'verify-email': LINK_LIFETIME_SECONDS['verify-email'],
  'reset-password': LINK_LIFETIME_SECONDS['reset-password'],
  'email-change': LINK_LIFETIME_SECONDS['confirm-email-change'],
};

/** A fresh token and its hash; made before anything is known about the account (forgot-password's timing). */
export function newActionToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export async function storeActionToken(
  executor: Executor,
  input: { purpose: AccountActionPurpose; hash: string; accountId: string; email: string },
): Promise<void> {
  await executor
    .insertInto('action_token')
    .values({
      purpose: input.purpose,
      token_hash: input.hash,
      account_id: input.accountId,
      email: input.email,
      expires_at: sql`now() + make_interval(secs => ${LIFETIME_SECONDS[input.purpose]})`,
    })
    .execute();
}

export interface UsableToken {
  accountId: string;
  /** the address the link was sent to */
  email: string;
}

const usable = (purpose: AccountActionPurpose, token: string) =>
  sql<boolean>`token_hash = ${hashToken(token)} and purpose = ${purpose} and used_at is null and expires_at > now()`;

/** The token's account when it is unused and unexpired, without using it. */
export async function findUsableToken(executor: Executor, purpose: AccountActionPurpose, token: string): Promise<UsableToken | undefined> {
  const row = await executor.selectFrom('action_token').select(['account_id', 'email']).where(usable(purpose, token)).executeTakeFirst();
  return row && { accountId: row.account_id, email: row.email };
}

/** Marks the token used and answers its account, or undefined when it is unknown, used or expired. */
export async function useToken(executor: Executor, purpose: AccountActionPurpose, token: string): Promise<UsableToken | undefined> {
  const row = await executor
    .updateTable('action_token')
    .set({ used_at: sql`now()` })
    .where(usable(purpose, token))
    .returning(['account_id', 'email'])
    .executeTakeFirst();
  return row && { accountId: row.account_id, email: row.email };
}

/** Ends every unused token of a purpose for an account (a reset after a password change, a superseded email change). */
export async function retireTokens(executor: Executor, accountId: string, purpose: AccountActionPurpose): Promise<void> {
  await executor
    .updateTable('action_token')
    .set({ used_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}
