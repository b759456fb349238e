/**
 * The account's row and API shapes, and making one: what every way of making or reading an
 * account shares (password sign-up, provider and email sign-ins, the lifecycle).
 */
import type { Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { AccountRow, DatabaseSchema } from '../db/schema.js';
import { createPersonalOrganization } from '../orgs/data.js';
import type { AccountShaping } from './account-shaping.js';
import { isLocale, type Locale } from '../shared/locales.js';
import type { UserAccount } from './schemas.js';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The columns an account's API shape needs: named rather than `*`, so the password hash is not
 * read where it is not needed and a column added later does not change these queries' results.
 */
export const ACCOUNT_COLUMNS = [
  'id',
  'email',
  'name',
  'created_at',
  'email_verified',
  'subscription_status',
  'subscription_plan',
  'subscription_period_end',
  'two_factor_enabled',
  'avatar_file_id',
  'locale',
] as const;
export type AccountColumns = Pick<AccountRow, (typeof ACCOUNT_COLUMNS)[number]>;

/** The API's shape of an account; `impersonatedBy`: the platform admin acting, in an impersonated session. */
export function toUserAccount(row: AccountColumns, shaping: AccountShaping, impersonatedBy?: { id: string; email: string }): UserAccount {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    'created-at': new Date(row.created_at).toISOString(),
    'email-verified': row.email_verified,
    'two-factor-enabled': row.two_factor_enabled,
    'platform-admin': shaping.has({ email: row.email, emailVerified: row.email_verified }),
    avatar: shaping.avatarOf(row.avatar_file_id),
    locale: isLocale(row.locale) ? row.locale : null,
    ...(impersonatedBy ? { 'impersonated-by': impersonatedBy } : {}),
    subscription: {
      status: row.subscription_status,
      plan: row.subscription_plan,
      'current-period-end': row.subscription_period_end ? new Date(row.subscription_period_end).toISOString() : null,
    },
  };
}

/** `impersonated-by` of an impersonated session: the acting admin's id and address (empty when that account is gone). */
export async function impersonatorOf(db: DB, actorId: string): Promise<{ id: string; email: string }> {
  const actor = await db.selectFrom('account').select('email').where('id', '=', actorId).executeTakeFirst();
  return { id: actorId, email: actor?.email ?? '' };
}

export interface NewAccountInput {
  /** normalised (see normalizeEmail) */
  email: string;
  name: string | null;
  /** null: no password (an account made by a provider sign-in) */
  passwordHash: string | null;
  emailVerified: boolean;
  /** the language the sign-up's browser named, if the product has it (docs/i18n.md) */
  locale?: Locale | null;
}

/**
 * Inserts an account and its personal organization (owner: the account) in the caller's
 * transaction: every way of making an account (password sign-up, a provider sign-in) goes
 * through here, so each gets the same rows. A taken email fails on the unique index (23505).
 */
export async function insertAccount(trx: Transaction<DatabaseSchema>, input: NewAccountInput): Promise<AccountColumns & { organizationId: string }> {
  const inserted = await trx
    .insertInto('account')
    .values({ email: input.email, name: input.name, password_hash: input.passwordHash, email_verified: input.emailVerified, locale: input.locale ?? null })
    .returning(ACCOUNT_COLUMNS)
    .executeTakeFirstOrThrow();
  const organizationId = await createPersonalOrganization(trx, inserted);
  return { ...inserted, organizationId };
}
