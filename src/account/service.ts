/**
 * Accounts: sign-up, log-in, refresh, log-out and the current account. Handlers call this;
 * it calls the database through Kysely and the auth components. Beside it: what it is built
 * from and answers (service-types.ts), sign-up (sign-up.ts), a complete sign-in's session
 * tokens (session-tokens.ts), the audit entries of refused log-ins (refused-log-ins.ts), the
 * account's shapes (account-shape.ts); re-exported here.
 */
import { msg } from '../i18n/messages.js';
import type { Locale } from '../shared/locales.js';
import { appendAccountAudit, type ClientOrigin, type RequestOrigin } from '../audit/log.js';
import type { LoginAttempt } from '../auth/rate-limit.js';
import { AccountLockedError, type ActedSession, type SessionClient, type SessionRecorder } from '../auth/refresh-tokens.js';
import type { CompiledQuery } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import type { AuditDetails } from '../db/schema.js';
import { HttpError, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import { AccountShaping } from './account-shaping.js';
import { ACCOUNT_COLUMNS, impersonatorOf, normalizeEmail, toUserAccount, type AccountColumns } from './account-shape.js';
import type { FirstFactorMethod, FirstFactorPolicy } from './first-factor.js';
import type { SignInClient } from './devices.js';
import { RefusedLogIns } from './refused-log-ins.js';
import type { CreateAccount, LogIn, UserAccount } from './schemas.js';
import { SecondFactorRequiredError, type AccountDeps, type SecondFactor, type SecondFactorPending, type Session } from './service-types.js';
import { SessionTokens } from './session-tokens.js';
import { signUp } from './sign-up.js';

export type { FirstFactorMethod, FirstFactorPolicy } from './first-factor.js';

export { ACCOUNT_COLUMNS, impersonatorOf, insertAccount, normalizeEmail, toUserAccount, type AccountColumns, type NewAccountInput } from './account-shape.js';
export { FAILED_LOG_IN_ENTRIES } from './refused-log-ins.js';
export {
  FirstFactorRefusedError,
  SecondFactorRequiredError,
  type AccountDeps,
  type SecondFactor,
  type SecondFactorPending,
  type Session,
} from './service-types.js';

const BAD_CREDENTIALS = msg('Invalid email or password');

export class AccountService {
  /** the hot lookup of `GET /me` and `account/me`, compiled once (always read fresh) */
  private readonly accountById: (id: string) => CompiledQuery<AccountColumns>;
  /** audit entries of refused log-ins, written after their answer (see logIn) */
  private readonly refusedLogIns: RefusedLogIns;

  /** a complete sign-in's session: opened, refreshed, logged out */
  private readonly tokens: SessionTokens;

  private readonly admins: AccountShaping;
  private readonly firstFactorPolicies: FirstFactorPolicy[] = [];

  constructor(private readonly deps: AccountDeps) {
    this.admins = deps.shaping ?? new AccountShaping();
    this.refusedLogIns = new RefusedLogIns(deps.db, deps.log);
    this.tokens = new SessionTokens(deps, this.admins);
    this.accountById = compiledOnce(1, (param) => deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', param(0)));
  }

  /** A new account with a password (sign-up.ts). */
  signUp(input: CreateAccount, client: ClientOrigin, locale: Locale | null = null): Promise<UserAccount> {
    return signUp(this.deps, this.admins, input, client, locale);
  }

  /**
   * `client.ip` is the client address the failure limits count by; it and the User-Agent are kept
   * on the session and in the audit entry. A refused log-in of an existing account is recorded
   * once `answered` has resolved (the route: its answer was handed to the socket), so the answer
   * takes as long whether the email has an account or not; see docs/audit.md.
   */
  async logIn(input: LogIn, client: SignInClient, answered: Promise<unknown> = Promise.resolve()): Promise<Session | SecondFactorPending> {
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
      row = await this.deps.db
        .selectFrom('account')
        .select([...ACCOUNT_COLUMNS, 'password_hash', 'locked_at'])
        .where('email', '=', email)
        .executeTakeFirst();
      // an account without a password (made by a provider sign-in) is answered like an unknown email
      valid = row?.password_hash
        ? await this.deps.passwords.verify(row.password_hash, input.password)
        : await this.deps.passwords.verifyNothing(input.password);
    } catch (err) {
      // the database failing is not a wrong password
      await attempt.refund();
      throw err;
    }
    if (!row || !valid) {
      this.deps.log.info('account/log-in-failed', 'Log-in refused');
      this.deps.onLogIn?.('failure');
      if (row) this.refusedLogIns.record(row.id, client, answered);
      throw unauthorized(BAD_CREDENTIALS, { type: 'unauthorized' });
    }
    await attempt.refund();
    // a locked account is told so once the password was right, before any second factor (the session start refuses it too)
    if (row.locked_at) throw new AccountLockedError();
    return this.passFirstFactor(row, 'password', client, { method: 'password' });
  }

  /**
   * Where every first factor ends (a password, an email link, a provider, a passkey): the
   * policies other modules plugged in are asked, then an account with two-factor on gets its
   * second step (`mfa-required`) unless the factor was a passkey with user verification (two
   * factors in one), and any other gets its session. `audit`: the details of the sign-in's audit
   * entry, written with the session (false: the caller recorded it).
   */
  private async passFirstFactor(
    row: Pick<AccountColumns, 'id' | 'email' | 'two_factor_enabled'>,
    method: FirstFactorMethod,
    client: SignInClient,
    audit: AuditDetails | false,
  ): Promise<Session | SecondFactorPending> {
    await this.checkFirstFactor(row, method);
    if (row.two_factor_enabled && method !== 'passkey') {
      if (!this.deps.secondFactor) throw new Error('Two-factor is on for this account but no second factor is configured');
      return { mfaRequired: await this.deps.secondFactor.challenge(row.id) };
    }
    const accountId = row.id;
    return this.openSession(
      accountId,
      client,
      audit === false
        ? undefined
        : (trx, familyId) =>
            appendAccountAudit(trx, {
              action: 'account.logged-in',
              accountId,
              target: { type: 'session', id: familyId },
              details: audit,
              origin: client,
            }),
    );
  }

  /**
   * A first factor another module verified (an email link, a provider, a passkey) for
   * `accountId`: on to the second factor or a session as {@link passFirstFactor} decides. A
   * locked account is refused (403 `account-locked`) before any second step.
   */
  async firstFactorPassed(
    accountId: string,
    method: FirstFactorMethod,
    client: SignInClient,
    audit: AuditDetails | false,
  ): Promise<Session | SecondFactorPending> {
    return this.passFirstFactor(await this.accountSigningIn(accountId), method, client, audit);
  }

  /** The account a sign-in is for: gone, a 401; locked (403 `account-locked`), refused before any second step. */
  private async accountSigningIn(accountId: string) {
    const row = await this.deps.db
      .selectFrom('account')
      .select(['id', 'email', 'two_factor_enabled', 'locked_at'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    if (row.locked_at) throw new AccountLockedError();
    return row;
  }

  /** Adds a policy every first factor is checked against (see {@link FirstFactorPolicy}); it throws an HttpError to refuse. */
  useFirstFactorPolicy(policy: FirstFactorPolicy): void {
    this.firstFactorPolicies.push(policy);
  }

  /** Plugs in the second factor log-ins of accounts with two-factor on go through (src/mfa/). */
  useSecondFactor(secondFactor: SecondFactor): void {
    this.deps.secondFactor = secondFactor;
  }

  /** Runs the first-factor policies: throws the first refusal. */
  async checkFirstFactor(account: { id: string; email: string }, method: FirstFactorMethod): Promise<void> {
    for (const policy of this.firstFactorPolicies) await policy({ id: account.id, email: account.email }, method);
  }

  /** Waits for the entries of refused log-ins answered but not yet written (on stop, and in tests). */
  settle(): Promise<void> {
    return this.refusedLogIns.settle();
  }

  /**
   * A session for a sign-in that is not one of the first factors judged here (an organization's
   * single sign-on, src/sso/: `firstFactor` null, for it is what a policy may ask for), or, with a
   * method, one the policies judge first. An account with two-factor on gets its second step
   * (`mfa-required`), as after every first factor. The sign-ins of this module's own first factors
   * go through {@link firstFactorPassed} instead.
   */
  async startSession(
    accountId: string,
    client: SignInClient,
    audit: { details: AuditDetails; origin: RequestOrigin },
    firstFactor: FirstFactorMethod | null = 'provider',
  ): Promise<Session | SecondFactorPending> {
    const row = await this.accountSigningIn(accountId);
    if (firstFactor !== null) await this.checkFirstFactor(row, firstFactor);
    if (row.two_factor_enabled) {
      if (!this.deps.secondFactor) throw new SecondFactorRequiredError();
      return { mfaRequired: await this.deps.secondFactor.challenge(row.id) };
    }
    // no browser is recognized here: a SAML response arrives as a cross-site POST, which carries no
    // SameSite=Lax device cookie, so every such sign-in would look new (docs/sign-in.md)
    return this.openSession(
      accountId,
      client,
      (trx, familyId) =>
        appendAccountAudit(trx, {
          action: 'account.logged-in',
          accountId,
          target: { type: 'session', id: familyId },
          details: audit.details,
          origin: audit.origin,
        }),
      false,
    );
  }

  /** The session of a complete sign-in: every sign-in ends here (session-tokens.ts). */
  openSession(accountId: string, client: SignInClient, record?: SessionRecorder<string>, browsers = true): Promise<Session> {
    return this.tokens.open(accountId, client, record, browsers);
  }

  /** A session in which another account acts, an impersonation (session-tokens.ts). */
  openActedSession(accountId: string, acted: ActedSession, client: SessionClient, record: SessionRecorder<string>): Promise<Session> {
    return this.tokens.openActed(accountId, acted, client, record);
  }

  /** `origin` goes into the audit entry of a detected reuse (session-tokens.ts). */
  refresh(token: string | undefined, origin: RequestOrigin): Promise<Session> {
    return this.tokens.refresh(token, origin);
  }

  logOut(token: string | undefined, origin: RequestOrigin): Promise<void> {
    return this.tokens.logOut(token, origin);
  }

  /** The caller's account; in an impersonated session with the admin acting (`impersonated-by`). */
  async get(user: Pick<AuthUser, 'id' | 'actor'>): Promise<UserAccount | undefined> {
    const { rows } = await this.deps.db.executeQuery(this.accountById(user.id));
    if (rows.length === 0) return undefined;
    return toUserAccount(rows[0], this.admins, user.actor && (await impersonatorOf(this.deps.db, user.actor.id)));
  }
}
