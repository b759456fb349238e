/**
 * Accounts: sign-up, log-in, refresh, log-out and the current account. Handlers call this;
 * it calls the database through Kysely and the auth components.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AccessTokens } from '../auth/access-tokens.js';
import { appendAccountAudit, appendAudit, type AuditCap, type ClientOrigin, type RequestOrigin } from '../audit/log.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { LoginAttempt, LoginRateLimiter, SignUpRateLimiter } from '../auth/rate-limit.js';
import { AccountLockedError, type ActedSession, type IssuedRefreshToken, type RefreshTokens, type SessionClient, type SessionRecorder } from '../auth/refresh-tokens.js';
import type { CompiledQuery, Transaction } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import type { DB } from '../db/database.js';
import type { AccountRow, AuditDetails, DatabaseSchema } from '../db/schema.js';
import { conflict, HttpError, requestCoercion, unauthorized } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import type { LogInOutcome } from '../observability/events.js';
import type { Mail } from '../mail/index.js';
import { createPersonalOrganization } from '../orgs/data.js';
import type { AuthUser } from '../http/routes.js';
import { newActionToken, storeActionToken } from './action-tokens.js';
import { PlatformAdmins } from './platform-admins.js';
import type { CreateAccount, LogIn, LogInResponse, MfaRequired, UserAccount } from './schemas.js';

/** A sign-in by another method (a provider) reached an account with two-factor on: it must sign in with its second factor. */
export class SecondFactorRequiredError extends Error {
  constructor() {
    super('This account uses two-factor authentication');
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The columns an account's API shape needs: named rather than `*`, so the password hash is not
 * read where it is not needed and a column added later does not change these queries' results.
 */
export const ACCOUNT_COLUMNS = [
  'id', 'email', 'name', 'created_at', 'email_verified', 'subscription_status', 'subscription_plan', 'subscription_period_end',
  'two_factor_enabled',
] as const;
export type AccountColumns = Pick<AccountRow, (typeof ACCOUNT_COLUMNS)[number]>;

/** The API's shape of an account; `impersonatedBy`: the platform admin acting, in an impersonated session. */
export function toUserAccount(row: AccountColumns, admins: PlatformAdmins, impersonatedBy?: { id: string; email: string }): UserAccount {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    'created-at': new Date(row.created_at).toISOString(),
    'email-verified': row.email_verified,
    'two-factor-enabled': row.two_factor_enabled,
    'platform-admin': admins.has({ email: row.email, emailVerified: row.email_verified }),
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
}

/**
 * Inserts an account and its personal organization (owner: the account) in the caller's
 * transaction: every way of making an account (password sign-up, a provider sign-in) goes
 * through here, so each gets the same rows. A taken email fails on the unique index (23505).
 */
export async function insertAccount(trx: Transaction<DatabaseSchema>, input: NewAccountInput): Promise<AccountColumns & { organizationId: string }> {
  const inserted = await trx.insertInto('account')
    .values({ email: input.email, name: input.name, password_hash: input.passwordHash, email_verified: input.emailVerified })
    .returning(ACCOUNT_COLUMNS).executeTakeFirstOrThrow();
  const organizationId = await createPersonalOrganization(trx, inserted);
  return { ...inserted, organizationId };
}

export interface AccountDeps {
  db: DB;
  passwords: PasswordHasher;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  loginLimiter: LoginRateLimiter;
  signUpLimiter: SignUpRateLimiter;
  mail: Pick<Mail, 'enqueue'>;
  log: Logger;
  /** told how each log-in ended (metrics, src/observability/) */
  onLogIn?: (outcome: LogInOutcome) => void;
  /** asks an account with two-factor on for its code (src/mfa/) */
  secondFactor?: SecondFactor;
  /** who is a platform admin (`platform-admin`; src/admin/ plugs in the rule); default: nobody */
  platformAdmins?: PlatformAdmins;
}

/** What log-in hands a password-verified account with two-factor on to (src/mfa/). */
export interface SecondFactor {
  /** starts the second step: the `mfa-required` body, with the `mfa-token` that completes it */
  challenge(accountId: string): Promise<MfaRequired>;
}

/** How an account proves who it is first (DESIGN.md, "Enterprise single sign-on": what `enforced` refuses). */
export type FirstFactorMethod = 'password' | 'email-link' | 'provider' | 'passkey';

/**
 * A rule another module sets on first factors (src/sso/: an enforced connection refuses every
 * method but the organization's SSO): throws the error to answer to refuse, resolves to allow.
 */
export type FirstFactorPolicy = (account: { id: string; email: string }, method: FirstFactorMethod) => Promise<void>;

/** A policy's refusal (403 with the policy's `type`, e.g. `sso-required`): sign-in pages tell it apart from a failure. */
export class FirstFactorRefusedError extends HttpError {
  constructor(type: string, message: string) {
    super(403, { type, message });
  }
}

/** A log-in that waits for its second factor: no tokens, no cookie. */
export interface SecondFactorPending {
  mfaRequired: MfaRequired;
}

/** A log-in result with the refresh token's absolute expiry, for the cookie. */
export interface Session {
  body: LogInResponse;
  refreshExpiresAt: Date;
}

const BAD_CREDENTIALS = 'Invalid email or password';
/**
 * Failed log-ins recorded per account: beyond this many in the window, failures are only logged
 * and counted (metrics). The rate limits bound failures per address, not per account; this
 * bounds what any number of addresses can add to one account's audit log (docs/audit.md).
 */
export const FAILED_LOG_IN_ENTRIES: AuditCap = { count: 20, seconds: 15 * 60 };
/** the pause between a refused log-in's answer and its audit entry, ms (see logIn) */
const AFTER_ANSWER_MS = 20;
const emailTaken = () => conflict('An account with this email already exists', { field: 'email' });

export class AccountService {
  /** the hot lookup of `GET /me` and `account/me`, compiled once (always read fresh) */
  private readonly accountById: (id: string) => CompiledQuery<AccountColumns>;
  /** audit entries of refused log-ins still being written after their answer (see logIn) */
  private readonly pending = new Set<Promise<void>>();

  private readonly admins: PlatformAdmins;
  private readonly firstFactorPolicies: FirstFactorPolicy[] = [];

  constructor(private readonly deps: AccountDeps) {
    this.admins = deps.platformAdmins ?? new PlatformAdmins();
    this.accountById = compiledOnce(1, (param) => deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', param(0)));
  }

  /**
   * A taken email is answered 409 before any hashing: the 409 itself says the email is taken, so
   * spending a hash to hide it in the timing would hide nothing, and would only let a flood of
   * sign-ups for one email take the hashing slots log-in waits on (docs/security.md).
   */
  async signUp(input: CreateAccount, client: ClientOrigin): Promise<UserAccount> {
    await this.deps.signUpLimiter.attempt(client.ip);
    if (input['confirm-password'] !== undefined && input['confirm-password'] !== input.password) {
      throw requestCoercion('body', [{ path: '/confirm-password', message: 'must equal password' }]);
    }
    const email = normalizeEmail(input.email);
    const taken = await this.deps.db.selectFrom('account').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw emailTaken();
    const passwordHash = await this.deps.passwords.hash(input.password);
    try {
      const { token, hash } = newActionToken();
      const row = await this.deps.db.transaction().execute(async (trx) => {
        const inserted = await insertAccount(trx, { email, name: input.name ?? null, passwordHash, emailVerified: false });
        await appendAudit(trx, {
          action: 'account.signed-up', organizationId: inserted.organizationId, accountId: inserted.id, actor: { accountId: inserted.id },
          target: { type: 'account', id: inserted.id }, origin: client,
        });
        // the verification link is sent if and only if the account exists
        await storeActionToken(trx, { purpose: 'verify-email', hash, accountId: inserted.id, email });
        await this.deps.mail.enqueue(trx, { kind: 'verify-email', to: email, data: { name: inserted.name, token } });
        return inserted;
      });
      this.deps.log.info('account/signed-up', 'Account created', { 'account-id': row.id });
      return toUserAccount(row, this.admins);
    } catch (err) {
      // the unique index decides, so two sign-ups racing for one email cannot both win
      if ((err as { code?: string }).code === '23505') throw emailTaken();
      throw err;
    }
  }

  /**
   * `client.ip` is the client address the failure limits count by; it and the User-Agent are kept
   * on the session and in the audit entry. A refused log-in of an existing account is recorded
   * once `answered` has resolved (the route: its answer was handed to the socket), so the answer
   * takes as long whether the email has an account or not; see docs/audit.md.
   */
  async logIn(input: LogIn, client: ClientOrigin, answered: Promise<unknown> = Promise.resolve()): Promise<Session | SecondFactorPending> {
    const email = normalizeEmail(input.email);
    // counts as a failure unless the password turns out right (src/auth/rate-limit.ts)
    let attempt: LoginAttempt;
    try {
      attempt = await this.deps.loginLimiter.begin(email, client.ip);
    } catch (err) {
      if (err instanceof HttpError && err.status === 429) this.deps.onLogIn?.('rate-limited');
      throw err;
    }
    let row: (AccountColumns & { password_hash: string | null; locked_at: Date | null }) | undefined;
    let valid: boolean;
    try {
      row = await this.deps.db.selectFrom('account').select([...ACCOUNT_COLUMNS, 'password_hash', 'locked_at']).where('email', '=', email).executeTakeFirst();
      // an account without a password (made by a provider sign-in) is answered like an unknown email
      valid = row?.password_hash ? await this.deps.passwords.verify(row.password_hash, input.password) : await this.deps.passwords.verifyNothing(input.password);
    } catch (err) {
      // the database failing is not a wrong password
      await attempt.refund();
      throw err;
    }
    if (!row || !valid) {
      this.deps.log.info('account/log-in-failed', 'Log-in refused');
      this.deps.onLogIn?.('failure');
      if (row) this.recordRefusedLogIn(row.id, client, answered);
      throw unauthorized(BAD_CREDENTIALS, { type: 'unauthorized' });
    }
    await attempt.refund();
    // a locked account is told so once the password was right, before any second factor (the session start refuses it too)
    if (row.locked_at) throw new AccountLockedError();
    await this.checkFirstFactor(row, 'password');
    // the password was right; an account with two-factor on logs in at /log-in/mfa (src/mfa/), never here
    if (row.two_factor_enabled) {
      if (!this.deps.secondFactor) throw new Error('Two-factor is on for this account but no second factor is configured');
      return { mfaRequired: await this.deps.secondFactor.challenge(row.id) };
    }
    const accountId = row.id;
    const refresh = await this.deps.refreshTokens.issue(accountId, client, (trx, familyId) => appendAccountAudit(trx, {
      action: 'account.logged-in', accountId, target: { type: 'session', id: familyId }, details: { method: 'password' }, origin: client,
    }));
    this.deps.log.info('account/logged-in', 'Logged in', { 'account-id': row.id });
    this.deps.onLogIn?.('success');
    return this.session(row, refresh);
  }

  /**
   * The entry of a refused log-in of an existing account, written after the answer: the work
   * never competes with the answer's delivery (PGlite runs its queries on this thread), and is
   * tracked so a stop waits for it. No one acted as the account: the actor is empty.
   */
  private recordRefusedLogIn(accountId: string, client: ClientOrigin, answered: Promise<unknown>): void {
    const work: Promise<void> = answered
      .then(() => sleep(AFTER_ANSWER_MS))
      .then(() => appendAccountAudit(this.deps.db, {
        action: 'account.log-in-failed', accountId, actor: {}, details: { reason: 'wrong-password' }, origin: client,
      }, FAILED_LOG_IN_ENTRIES))
      .then(() => undefined)
      .catch((err: Error) => this.deps.log.error('account/audit-failed', `Could not record a refused log-in: ${err.message}`, { class: err.constructor?.name }))
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  /** Waits for the entries of refused log-ins answered but not yet written (on stop, and in tests). */
  /** Plugs in the second factor log-ins of accounts with two-factor on go through (src/mfa/). */
  useSecondFactor(secondFactor: SecondFactor): void {
    this.deps.secondFactor = secondFactor;
  }

  /** Adds a rule every first factor must pass (src/sso/'s enforcement); checked after the factor itself succeeded. */
  useFirstFactorPolicy(policy: FirstFactorPolicy): void {
    this.firstFactorPolicies.push(policy);
  }

  /** Runs the first-factor policies: throws the first refusal. */
  async checkFirstFactor(account: { id: string; email: string }, method: FirstFactorMethod): Promise<void> {
    for (const policy of this.firstFactorPolicies) await policy({ id: account.id, email: account.email }, method);
  }

  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Starts a session (a new refresh family) for an account that another method signed in (a
   * provider's callback, src/oidc/): what a password log-in ends with, without the password.
   * An account with two-factor on is refused (`SecondFactorRequiredError`): a provider's sign-in
   * never stands in for its second factor (docs/oidc.md). `firstFactor`: the method the
   * first-factor policies judge (a provider's by default); null for a sign-in that is itself what
   * a policy asks for (an organization's SSO).
   */
  async startSession(
    accountId: string, client: SessionClient, audit: { details: AuditDetails; origin: RequestOrigin }, firstFactor: FirstFactorMethod | null = 'provider',
  ): Promise<Session> {
    if (firstFactor !== null) {
      const account = await this.deps.db.selectFrom('account').select(['id', 'email']).where('id', '=', accountId).executeTakeFirst();
      if (account) await this.checkFirstFactor(account, firstFactor);
    }
    const { row, refresh } = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', accountId).executeTakeFirst();
      if (!row) throw unauthorized('Account no longer exists');
      if (row.two_factor_enabled) throw new SecondFactorRequiredError();
      const refresh = await this.deps.refreshTokens.issue(row.id, client, undefined, trx);
      const organization = await trx.selectFrom('organization').select('id').where('personal_account_id', '=', row.id).executeTakeFirst();
      await appendAudit(trx, {
        action: 'account.logged-in', organizationId: organization?.id ?? null, accountId: row.id, actor: { accountId: row.id },
        target: { type: 'session', id: refresh.familyId }, details: audit.details, origin: audit.origin,
      });
      return { row, refresh };
    });
    this.deps.log.info('account/logged-in', 'Logged in', { 'account-id': row.id, ...audit.details });
    this.deps.onLogIn?.('success');
    return this.session(row, refresh);
  }

  /** `origin` goes into the audit entry of a detected reuse. */
  async refresh(token: string | undefined, origin: RequestOrigin): Promise<Session> {
    if (!token) throw unauthorized('No refresh token given');
    // a reuse is no one's action as the account: a stolen token's holder, or the owner's own stale copy
    const result = await this.deps.refreshTokens.rotate(token, (trx, reuse) => appendAccountAudit(trx, {
      action: 'account.refresh-token-reused', accountId: reuse.accountId, actor: {},
      target: { type: 'session', id: reuse.familyId }, details: { 'session-ended': true }, origin,
    }));
    switch (result.outcome) {
      case 'invalid':
        throw unauthorized('Invalid refresh token');
      case 'expired':
        throw unauthorized('Refresh token expired');
      case 'locked':
        throw new AccountLockedError();
      case 'reused':
        this.deps.log.warn('account/refresh-token-reuse', 'A rotated refresh token was presented again; its family is revoked', {
          'account-id': result.accountId, 'family-id': result.familyId,
        });
        throw unauthorized('Refresh token was already used');
    }
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', result.accountId).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    return this.session(row, result, result.actorAccountId ?? undefined);
  }

  async logOut(token: string | undefined, origin: RequestOrigin): Promise<void> {
    // the family's access tokens are refused from now on, on every instance (see revoked-sessions.ts)
    const familyId = token
      ? await this.deps.refreshTokens.revokeFamilyOf(token, async (trx, ended) => {
        if (ended.accountId) {
          await appendAccountAudit(trx, { action: 'account.logged-out', accountId: ended.accountId, target: { type: 'session', id: ended.familyId }, origin });
        }
      })
      : undefined;
    if (familyId) this.deps.log.info('account/logged-out', 'Logged out', { 'family-id': familyId });
  }

  /** The caller's account; in an impersonated session with the admin acting (`impersonated-by`). */
  async get(user: Pick<AuthUser, 'id' | 'actor'>): Promise<UserAccount | undefined> {
    const { rows } = await this.deps.db.executeQuery(this.accountById(user.id));
    if (rows.length === 0) return undefined;
    return toUserAccount(rows[0], this.admins, user.actor && (await this.actorOf(user.actor.id)));
  }

  /**
   * A session of `accountId` in which another account acts (an impersonation, src/admin/): its
   * access tokens carry `act`, it ends after `acted.lifetimeSeconds` whatever the refreshes, and
   * `record` writes its audit entry in the transaction that starts it. A locked account is
   * refused (403 `account-locked`) like every sign-in.
   */
  async openActedSession(accountId: string, acted: ActedSession, client: SessionClient, record: SessionRecorder<string>): Promise<Session> {
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', accountId).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    const refresh = await this.deps.refreshTokens.issue(row.id, client, record, undefined, acted);
    return this.session(row, refresh, acted.actorAccountId);
  }

  private actorOf(actorId: string): Promise<{ id: string; email: string }> {
    return impersonatorOf(this.deps.db, actorId);
  }

  /**
   * A session for an account whose log-in another module verified (a second factor, a
   * passkey): the same response and refresh-token family as a password log-in.
   */
  async openSession(accountId: string, client: ClientOrigin): Promise<Session> {
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', accountId).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    const refresh = await this.deps.refreshTokens.issue(row.id, client);
    this.deps.onLogIn?.('success');
    return this.session(row, refresh);
  }

  /**
   * The response of a log-in or refresh: the access token names the refresh family as its
   * session (`sid`), when its sign-in happened (`auth_time`), the acting admin of an impersonated
   * one (`act`), and outlives none of them.
   */
  private async session(row: AccountColumns, refresh: Pick<IssuedRefreshToken, 'familyId' | 'token' | 'expiresAt' | 'authTime'>, actorId?: string): Promise<Session> {
    const account = toUserAccount(row, this.admins, actorId === undefined ? undefined : await this.actorOf(actorId));
    const user: AuthUser = {
      id: account.id, email: account.email, sessionId: refresh.familyId, authTime: refresh.authTime, ...(actorId === undefined ? {} : { actor: { id: actorId } }),
    };
    return {
      body: {
        'access-token': await this.deps.accessTokens.issue(user, refresh.expiresAt),
        'refresh-token': refresh.token,
        'token-type': 'Bearer',
        'expires-in': this.deps.accessTokens.lifetime(refresh.expiresAt),
        account,
      },
      refreshExpiresAt: refresh.expiresAt,
    };
  }
}
