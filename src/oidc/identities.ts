/**
 * Provider identities: which account a provider sign-in belongs to, linking while signed in,
 * the account page's list, and unlinking. Each change commits with its audit entries.
 *
 * Which account a sign-in is (docs/security.md, "Provider sign-in"):
 * 1. the identity (provider, subject) is known: its account, whatever the email says now;
 * 2. otherwise the provider must assert a verified email (`email_verified`); then
 *    - an account with that email whose address is verified here too gets the identity linked;
 *    - an account with that email that is NOT verified here is refused (`email-in-use`): its
 *      password may be a squatter's, set before the owner ever signed in, and linking would let
 *      that password into the owner's account. Its owner logs in and links from the account page;
 *    - no account: a new one, verified, without a password, with its personal organization.
 */
import type { Transaction } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { SignUpRateLimiter } from '../auth/rate-limit.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import { HttpError, notFound } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { SecurityNotices } from '../account/notices.js';
import type { NotificationService } from '../notifications/service.js';
import { assertAnotherWayToSignIn, signInMethods } from '../account/sign-in-methods.js';
import { insertAccount } from '../account/service.js';
import type { ProviderProfile } from './providers.js';
import type { Identities, Identity } from './schemas.js';
import { phrase } from '../i18n/messages.js';

/** Why a provider sign-in or link was refused: the code the client shows a message for. */
export type RefusalCode = 'email-not-verified' | 'email-in-use' | 'identity-in-use' | 'session-ended' | 'rate-limited' | 'account-not-verified';

export class SignInRefused extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'SignInRefused';
  }
}

export interface SignInResult {
  accountId: string;
  /** a new account was made */
  created: boolean;
  /** the identity was linked by this sign-in */
  linked: boolean;
}

export interface IdentityDeps {
  db: DB;
  log: Logger;
  /** the notice of a link (src/notifications) */
  notifications: Pick<NotificationService, 'notify'>;
  /** new accounts count against the sign-up limit per client address, as password sign-ups do */
  signUpLimiter: SignUpRateLimiter;
  /** queues a security notice in the change's transaction (src/account/notices.ts) */
  notices?: SecurityNotices;
}

type Trx = Transaction<DatabaseSchema>;

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/** The identity a provider's subject is linked as, and its account; undefined when it is not linked. */
function identityOf(trx: Trx, provider: string, subject: string) {
  return trx.selectFrom('account_identity').select(['id', 'account_id']).where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
}

async function personalOrganizationId(trx: Trx, accountId: string): Promise<string | null> {
  const row = await trx.selectFrom('organization').select('id').where('personal_account_id', '=', accountId).executeTakeFirst();
  return row?.id ?? null;
}

/** The account's identities in their API shape, oldest first (the account page, the export). */
export async function accountIdentities(db: DB, accountId: string): Promise<Identity[]> {
  const rows = await db
    .selectFrom('account_identity')
    .select(['id', 'provider', 'email', 'created_at', 'last_used_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    email: r.email,
    'created-at': r.created_at.toISOString(),
    'last-used-at': r.last_used_at ? r.last_used_at.toISOString() : null,
  }));
}

export class IdentityService {
  constructor(private readonly deps: IdentityDeps) {}

  /**
   * The account a provider sign-in belongs to, found, linked or made by the rules above; the
   * caller then starts its session. A race with another first sign-in of the same person (the
   * unique indexes decide) is tried once more, and then finds what the other made.
   */
  async signIn(provider: string, profile: ProviderProfile, origin: RequestOrigin): Promise<SignInResult> {
    try {
      return await this.deps.db.transaction().execute((trx) => this.resolve(trx, provider, profile, origin));
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return this.deps.db.transaction().execute((trx) => this.resolve(trx, provider, profile, origin));
    }
  }

  private async resolve(trx: Trx, provider: string, profile: ProviderProfile, origin: RequestOrigin): Promise<SignInResult> {
    const verifiedEmail = profile.emailVerified ? profile.email : null;
    const known = await identityOf(trx, provider, profile.subject);
    if (known) {
      await trx
        .updateTable('account_identity')
        .set({ last_used_at: new Date(), ...(verifiedEmail ? { email: verifiedEmail } : {}) })
        .where('id', '=', known.id)
        .execute();
      return { accountId: known.account_id, created: false, linked: false };
    }
    if (!verifiedEmail) {
      throw new SignInRefused(
        'email-not-verified',
        profile.email ? 'The provider does not say the email address is verified' : 'The provider gave no email address',
      );
    }
    const existing = await trx.selectFrom('account').select(['id', 'email_verified']).where('email', '=', verifiedEmail).executeTakeFirst();
    if (existing) {
      if (!existing.email_verified) {
        throw new SignInRefused('email-in-use', 'An account with this email exists but has not verified it; it must log in and link the provider');
      }
      await this.insertIdentity(trx, existing.id, provider, profile.subject, verifiedEmail, origin, 'verified-email');
      return { accountId: existing.id, created: false, linked: true };
    }
    try {
      await this.deps.signUpLimiter.attempt(origin.ip ?? 'unknown');
    } catch (err) {
      if (err instanceof HttpError && err.status === 429) throw new SignInRefused('rate-limited', 'Too many sign-ups from this address');
      throw err;
    }
    const account = await insertAccount(trx, { email: verifiedEmail, name: profile.name, passwordHash: null, emailVerified: true });
    await appendAudit(trx, {
      action: 'account.signed-up',
      organizationId: account.organizationId,
      accountId: account.id,
      actor: { accountId: account.id },
      target: { type: 'account', id: account.id },
      details: { method: 'oidc', provider },
      origin,
    });
    await this.insertIdentity(trx, account.id, provider, profile.subject, verifiedEmail, origin, 'sign-up');
    this.deps.log.info('account/signed-up', 'Account created by a provider sign-in', { 'account-id': account.id, provider });
    return { accountId: account.id, created: true, linked: true };
  }

  /**
   * Links the identity to the signed-in account that started the link (its session must still
   * be live). Already linked to it: nothing changes. Linked to another account: refused.
   */
  async link(provider: string, profile: ProviderProfile, link: { accountId: string; sessionId: string }, origin: RequestOrigin): Promise<void> {
    await this.deps.db
      .transaction()
      .execute(async (trx) => {
        const session = await trx
          .selectFrom('refresh_family')
          .select('id')
          .where('id', '=', link.sessionId)
          .where('account_id', '=', link.accountId)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', new Date())
          .executeTakeFirst();
        if (!session) throw new SignInRefused('session-ended', 'The session that started the link has ended');
        // checked when the link started (route data `verifiedEmail`), and again here: nothing lasting before the address is proven
        const account = await trx.selectFrom('account').select('email_verified').where('id', '=', link.accountId).forUpdate().executeTakeFirst();
        if (!account?.email_verified) throw new SignInRefused('account-not-verified', "The account's address is not verified");
        const known = await identityOf(trx, provider, profile.subject);
        if (known && known.account_id !== link.accountId) {
          throw new SignInRefused('identity-in-use', 'This identity is linked to another account');
        }
        if (known) return;
        const email = profile.emailVerified ? profile.email : null;
        await this.insertIdentity(trx, link.accountId, provider, profile.subject, email, origin, 'signed-in');
      })
      .catch((err: unknown) => {
        // the same identity linked by a concurrent request to another account
        if (isUniqueViolation(err)) throw new SignInRefused('identity-in-use', 'This identity is linked to another account');
        throw err;
      });
  }

  private async insertIdentity(
    trx: Trx,
    accountId: string,
    provider: string,
    subject: string,
    email: string | null,
    origin: RequestOrigin,
    via: 'verified-email' | 'sign-up' | 'signed-in',
  ): Promise<void> {
    const identity = await trx
      .insertInto('account_identity')
      .values({ account_id: accountId, provider, subject, email, last_used_at: via === 'signed-in' ? null : new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    await appendAudit(trx, {
      action: 'account.identity-linked',
      organizationId: await personalOrganizationId(trx, accountId),
      accountId,
      actor: { accountId },
      target: { type: 'identity', id: identity.id },
      details: { provider, via },
      origin,
    });
    // a new way into an existing account: its owner hears of it (a sign-up's own identity is no news)
    if (via !== 'sign-up') {
      await this.deps.notifications.notify(trx, {
        kind: 'identity-linked',
        to: { accounts: [accountId] },
        title: phrase('{provider} can now sign in to your account', { provider }),
        body: email
          ? phrase(
              'A {provider} identity ({email}) was linked: it signs in to the account from now on. Unlink it in your security settings if it was not you.',
              { provider, email },
            )
          : phrase('A {provider} identity was linked: it signs in to the account from now on. Unlink it in your security settings if it was not you.', {
              provider,
            }),
        url: '/settings/security',
        email: (owner) => ({ kind: 'identity-linked-notice', to: owner.email, data: { name: owner.name, provider, providerEmail: email, at: new Date() } }),
      });
    }
    this.deps.log.info('oidc/identity-linked', 'Provider identity linked', { 'account-id': accountId, provider, via });
  }

  /** The account's identities, oldest first, and whether it has a password (the other way to sign in). */
  async list(accountId: string): Promise<Identities> {
    const account = await this.deps.db.selectFrom('account').select('password_hash').where('id', '=', accountId).executeTakeFirst();
    return { identities: await accountIdentities(this.deps.db, accountId), 'has-password': Boolean(account?.password_hash) };
  }

  /** Unlinks one of the caller's identities; 404 for any other id, 409 when it is the last way to sign in. */
  async unlink(user: AuthUser, identityId: string, origin: RequestOrigin): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      // locks the account: two unlinks at once are decided one after the other
      const methods = await signInMethods(trx, user.id);
      const identity = await trx
        .selectFrom('account_identity')
        .select(['id', 'provider'])
        .where('id', '=', identityId)
        .where('account_id', '=', user.id)
        .executeTakeFirst();
      if (!methods || !identity) throw notFound('No such identity');
      assertAnotherWayToSignIn(methods, { identityId });
      await trx.deleteFrom('account_identity').where('id', '=', identity.id).execute();
      await appendAudit(trx, {
        action: 'account.identity-unlinked',
        organizationId: await personalOrganizationId(trx, user.id),
        accountId: user.id,
        actor: { accountId: user.id },
        target: { type: 'identity', id: identity.id },
        details: { provider: identity.provider },
        origin,
      });
      await this.deps.notices?.(trx, user.id, 'identity-unlinked', origin, identity.provider);
      this.deps.log.info('oidc/identity-unlinked', 'Provider identity unlinked', { 'account-id': user.id, provider: identity.provider });
    });
  }
}
