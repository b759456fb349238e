/**
 * Refresh tokens: opaque (256 random bits), stored as a SHA-256 hash for lookup and sealed
 * with the server key, single-use, rotated on every refresh. Every token descends from one
 * log-in (its family); the family expires absolutely `ttl` after the log-in.
 *
 * Reuse: presenting the token that was just rotated again within the grace window answers
 * with the family's current token (two tabs refreshing at once both stay logged in); any
 * other reuse revokes the whole family. The presented token's row is locked (`for update`)
 * for the decision, so the rule holds across connections and instances.
 *
 * Ending a session (log-out, reuse, and the account-wide revocations, which end the account's
 * OAuth grants too) runs session-revocation.ts's statements in the change's transaction; once it
 * has committed, this process records the ended sessions at once (see revoked-sessions.ts).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import { HttpError, unauthorized } from '../http/errors.js';
import { type EndedSession, endGrantsOf, revokeFamiliesWhere } from './session-revocation.js';

export interface RefreshSettings {
  secret: string;
  /** family lifetime from log-in, seconds */
  ttl: number;
  /** seconds in which the just-rotated token may be presented again; 0 = strict */
  reuseGrace: number;
}

/** Where this process records the sessions it ended, once the revocation has committed. */
export interface RevocationSink {
  markRevoked(familyIds: Iterable<string>): void;
}

export type RotateResult =
  | { outcome: 'rotated' | 'grace'; accountId: string; familyId: string; token: string; expiresAt: Date; authTime: number; actorAccountId: string | null }
  | { outcome: 'invalid' | 'expired' | 'locked' }
  | { outcome: 'reused'; accountId: string; familyId: string };

export interface IssuedRefreshToken {
  /** the new family: the session the access tokens name (`sid`) */
  familyId: string;
  token: string;
  expiresAt: Date;
  /** when the session's sign-in happened (the family's creation), Unix seconds: the access tokens' `auth_time` */
  authTime: number;
}

/** Unix seconds of a time. */
const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** 403 `account-locked`: a platform admin locked the account (src/admin/); no session of it starts. */
export class AccountLockedError extends HttpError {
  constructor() {
    super(403, { type: 'account-locked', message: 'This account is locked; contact support' });
  }
}

/** A session someone else acts in: an impersonation by a platform admin (src/admin/). */
export interface ActedSession {
  /** the acting account: its id is the access tokens' `act.sub` */
  actorAccountId: string;
  /** the session's whole life, seconds (shorter than the usual `ttl`); refreshing never extends it */
  lifetimeSeconds: number;
}

/** Where a log-in came from, kept on its family for the sessions page. */
export interface SessionClient {
  userAgent?: string | null;
  ip?: string | null;
}

/**
 * Writes what a session change causes (its audit entry) in the change's own transaction, so
 * the record exists exactly when the change committed.
 */
export type SessionRecorder<T> = (trx: Transaction<DatabaseSchema>, what: T) => Promise<unknown>;

/** A User-Agent is the client's to write: kept to this many characters. */
export const USER_AGENT_MAX = 256;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The cookie that carries the refresh token (HttpOnly, SameSite=Strict, Path=/api/account). */
export const REFRESH_COOKIE = 'refresh-token';
/** The one that carries an impersonated session's, beside the admin's own (src/account/routes.ts, docs/admin.md). */
export const IMPERSONATION_COOKIE = 'impersonation-token';

export class RefreshTokens {
  private readonly sealKey: Buffer;

  constructor(
    private readonly db: DB,
    private readonly settings: RefreshSettings,
    private readonly revocations: RevocationSink,
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', settings.secret, 'saas-refresh-token', 'seal', 32));
  }

  private seal(token: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  private unseal(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.sealKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }

  /**
   * Starts a family for a log-in and returns its first token; `record` runs in the same
   * transaction: `trx` when given (the caller's, whose audit entry commits with it), else one of its own.
   * Every way of signing in ends here: a locked account gets {@link AccountLockedError}, a
   * deleted one a 401. The account's row is share-locked meanwhile, so a lock committing at the
   * same time either comes first (refused here) or ends this session with the others.
   */
  async issue(
    accountId: string,
    client: SessionClient = {},
    record?: SessionRecorder<string>,
    trx?: Transaction<DatabaseSchema>,
    acted?: ActedSession,
  ): Promise<IssuedRefreshToken> {
    const expiresAt = new Date(Date.now() + Math.min(this.settings.ttl, acted?.lifetimeSeconds ?? Infinity) * 1000);
    const token = randomBytes(32).toString('base64url');
    const write = async (trx: Transaction<DatabaseSchema>) => {
      const account = await trx.selectFrom('account').select('locked_at').where('id', '=', accountId).forShare().executeTakeFirst();
      if (!account) throw unauthorized('Account no longer exists');
      if (account.locked_at) throw new AccountLockedError();
      const family = await trx
        .insertInto('refresh_family')
        .values({
          account_id: accountId,
          expires_at: expiresAt,
          last_used_at: sql`now()`,
          user_agent: client.userAgent ? client.userAgent.slice(0, USER_AGENT_MAX) : null,
          ip: client.ip ?? null,
          actor_account_id: acted?.actorAccountId ?? null,
        })
        .returning(['id', 'created_at'])
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('refresh_token')
        .values({ family_id: family.id, token_hash: hashToken(token), token_sealed: this.seal(token) })
        .execute();
      await record?.(trx, family.id);
      return family;
    };
    const family = trx ? await write(trx) : await this.db.transaction().execute(write);
    return { familyId: family.id, token, expiresAt, authTime: unixSeconds(family.created_at) };
  }

  /** Exchanges a token for its successor, applying the reuse rules; `recordReuse` runs in the transaction that revokes a reused token's family. */
  async rotate(token: string, recordReuse?: SessionRecorder<{ accountId: string; familyId: string }>): Promise<RotateResult> {
    let reusedGrants: string[] = [];
    const result = await this.db.transaction().execute(async (trx): Promise<RotateResult> => {
      const row = await trx
        .selectFrom('refresh_token as t')
        .innerJoin('refresh_family as f', 'f.id', 't.family_id')
        .leftJoin('account as a', 'a.id', 'f.account_id')
        .select([
          't.id',
          't.family_id',
          't.rotated_at',
          't.replaced_by',
          'f.account_id',
          'f.expires_at',
          'f.revoked_at',
          'f.created_at',
          'f.actor_account_id',
          'a.locked_at',
        ])
        .where('t.token_hash', '=', hashToken(token))
        .forUpdate('t')
        .executeTakeFirst();
      // locking ended the family too: its holder is told why
      if (row?.locked_at) return { outcome: 'locked' as const };
      // a family without an account belongs to a deleted one and is always revoked
      if (!row || row.revoked_at || !row.account_id) return { outcome: 'invalid' as const };
      if (row.expires_at.getTime() <= Date.now()) return { outcome: 'expired' as const };

      if (!row.rotated_at) {
        const next = randomBytes(32).toString('base64url');
        const inserted = await trx
          .insertInto('refresh_token')
          .values({ family_id: row.family_id, token_hash: hashToken(next), token_sealed: this.seal(next) })
          .returning('id')
          .executeTakeFirstOrThrow();
        await trx.updateTable('refresh_token').set({ rotated_at: sql`now()`, replaced_by: inserted.id }).where('id', '=', row.id).execute();
        await trx.updateTable('refresh_family').set({ last_used_at: sql`now()` }).where('id', '=', row.family_id).execute();
        return {
          outcome: 'rotated' as const,
          accountId: row.account_id,
          familyId: row.family_id,
          token: next,
          expiresAt: row.expires_at,
          authTime: unixSeconds(row.created_at),
          actorAccountId: row.actor_account_id,
        };
      }

      // Reuse. Inside the grace window, the immediate parent of the family's current token
      // gets that current token back; nothing new is minted.
      const withinGrace = this.settings.reuseGrace > 0 && Date.now() - row.rotated_at.getTime() <= this.settings.reuseGrace * 1000;
      if (withinGrace && row.replaced_by) {
        const current = await trx.selectFrom('refresh_token').select(['token_sealed', 'rotated_at']).where('id', '=', row.replaced_by).executeTakeFirst();
        if (current && !current.rotated_at) {
          return {
            outcome: 'grace' as const,
            accountId: row.account_id,
            familyId: row.family_id,
            token: this.unseal(current.token_sealed),
            expiresAt: row.expires_at,
            authTime: unixSeconds(row.created_at),
            actorAccountId: row.actor_account_id,
          };
        }
      }
      const { grants } = await revokeFamiliesWhere(trx, sql`id = ${row.family_id}`);
      await recordReuse?.(trx, { accountId: row.account_id, familyId: row.family_id });
      reusedGrants = grants;
      return { outcome: 'reused' as const, accountId: row.account_id, familyId: row.family_id };
    });
    if (result.outcome === 'reused') this.revocations.markRevoked([result.familyId, ...reusedGrants]);
    return result;
  }

  /**
   * Revokes the family of a token (log-out). Unknown tokens are ignored; returns the family.
   * `record` runs in the revocation's transaction when it ended a live session.
   */
  async revokeFamilyOf(token: string, record?: SessionRecorder<EndedSession>): Promise<string | undefined> {
    const row = await this.db.selectFrom('refresh_token').select('family_id').where('token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!row) return undefined;
    await this.revokeFamily(row.family_id, record);
    return row.family_id;
  }

  /**
   * Ends one session ("end session"): its refresh tokens stop working and its access tokens are
   * refused everywhere. `record` runs in the revocation's transaction when it ended a live session.
   */
  async revokeFamily(familyId: string, record?: SessionRecorder<EndedSession>): Promise<boolean> {
    const revoked = record
      ? await this.db.transaction().execute(async (trx) => {
          const ended = await revokeFamiliesWhere(trx, sql`id = ${familyId}`);
          for (const session of ended.sessions) await record(trx, session);
          return ended;
        })
      : await revokeFamiliesWhere(this.db, sql`id = ${familyId}`);
    this.revocations.markRevoked([...revoked.sessions.map((r) => r.familyId), ...revoked.grants]);
    return revoked.sessions.length > 0;
  }

  /**
   * Ends every session of an account (password reset, account deletion, locking), or every one but
   * `exceptFamilyId` (the caller's own, e.g. "log out my other devices"), and every session it
   * acts in as a platform admin (impersonations). Returns the families ended.
   */
  async revokeAllForAccount(accountId: string, exceptFamilyId?: string, options: { passwordChanged?: boolean } = {}): Promise<string[]> {
    const revoked = await this.db.transaction().execute((trx) => this.revokeAllForAccountIn(trx, accountId, exceptFamilyId, options));
    this.sessionsEnded(revoked);
    return revoked;
  }

  /**
   * The same in the caller's transaction (a change whose other effects must commit with it):
   * the caller hands the answer to {@link sessionsEnded} once the transaction has committed.
   */
  async revokeAllForAccountIn(
    trx: Kysely<DatabaseSchema>,
    accountId: string,
    exceptFamilyId?: string,
    options: { passwordChanged?: boolean } = {},
  ): Promise<string[]> {
    const except = exceptFamilyId === undefined ? sql`` : sql` and id <> ${exceptFamilyId}`;
    const ended = await revokeFamiliesWhere(trx, sql`(account_id = ${accountId} or actor_account_id = ${accountId})${except}`);
    const ids = [...ended.sessions.map((r) => r.familyId), ...ended.grants];
    // every session, or a new password: every app the account connected too (src/oauth/); "my
    // other devices" keeps those the caller's own session consented to
    if (exceptFamilyId === undefined || options.passwordChanged)
      ids.push(...(await endGrantsOf(trx, accountId, exceptFamilyId === undefined ? 'account' : 'password-changed')));
    return ids;
  }

  /** Records sessions ended by a committed transaction: their access tokens are refused here at once. */
  sessionsEnded(familyIds: readonly string[]): void {
    if (familyIds.length > 0) this.revocations.markRevoked(familyIds);
  }

  /** The live session (family) a refresh token belongs to, with its account; undefined for an unknown, used-up, ended or expired one. */
  async liveSessionOf(token: string): Promise<{ familyId: string; accountId: string } | undefined> {
    const row = await this.db
      .selectFrom('refresh_token as t')
      .innerJoin('refresh_family as f', 'f.id', 't.family_id')
      .select(['f.id', 'f.account_id'])
      .where('t.token_hash', '=', hashToken(token))
      .where('f.revoked_at', 'is', null)
      .where('f.expires_at', '>', new Date())
      .executeTakeFirst();
    return row?.account_id ? { familyId: row.id, accountId: row.account_id } : undefined;
  }
}
