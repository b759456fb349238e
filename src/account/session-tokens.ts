/**
 * A session's tokens, once a sign-in is complete: the refresh family and its first access token
 * opened (a new browser noted for its security notice), rotated at a refresh, revoked at log-out;
 * each with its audit entry in the same transaction. The account service (service.ts) hands its
 * sign-ins here.
 */
import { appendAccountAudit, type RequestOrigin } from '../audit/log.js';
import { AccountLockedError, type ActedSession, type IssuedRefreshToken, type SessionClient, type SessionRecorder } from '../auth/refresh-tokens.js';
import { unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import { ACCOUNT_COLUMNS, impersonatorOf, toUserAccount, type AccountColumns } from './account-shape.js';
import { newDeviceId, noteDevice, type SignInClient } from './devices.js';
import type { AccountShaping } from './account-shaping.js';
import type { AccountDeps, Session } from './service-types.js';

export type SessionTokensDeps = Pick<AccountDeps, 'db' | 'accessTokens' | 'refreshTokens' | 'log' | 'onLogIn' | 'notices'>;

export class SessionTokens {
  constructor(
    private readonly deps: SessionTokensDeps,
    private readonly admins: AccountShaping,
  ) {}

  /**
   * The session of a complete sign-in (both factors where two-factor is on): every sign-in ends
   * here, the second step of one (src/mfa/) included. `record` writes its audit entry with it.
   */
  async open(accountId: string, client: SignInClient, record?: SessionRecorder<string>, browsers = true): Promise<Session> {
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', accountId).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    // the browser's id: a sign-in from one the account has not used is told by email (devices.ts)
    const device = browsers ? (client.device ?? newDeviceId()) : undefined;
    const refresh = await this.deps.refreshTokens.issue(row.id, client, async (trx, familyId) => {
      await record?.(trx, familyId);
      if (device) await noteDevice(trx, this.deps.notices, row.id, device, client);
    });
    this.deps.log.info('account/logged-in', 'Logged in', { 'account-id': row.id });
    this.deps.onLogIn?.('success');
    return { ...(await this.session(row, refresh)), ...(device ? { device } : {}) };
  }

  /**
   * A session of `accountId` in which another account acts (an impersonation, src/admin/): its
   * access tokens carry `act`, it ends after `acted.lifetimeSeconds` whatever the refreshes, and
   * `record` writes its audit entry in the transaction that starts it. A locked account is
   * refused (403 `account-locked`) like every sign-in.
   */
  async openActed(accountId: string, acted: ActedSession, client: SessionClient, record: SessionRecorder<string>): Promise<Session> {
    const row = await this.deps.db.selectFrom('account').select(ACCOUNT_COLUMNS).where('id', '=', accountId).executeTakeFirst();
    if (!row) throw unauthorized('Account no longer exists');
    const refresh = await this.deps.refreshTokens.issue(row.id, client, record, undefined, acted);
    return this.session(row, refresh, acted.actorAccountId);
  }

  /** `origin` goes into the audit entry of a detected reuse. */
  async refresh(token: string | undefined, origin: RequestOrigin): Promise<Session> {
    if (!token) throw unauthorized('No refresh token given');
    // a reuse is no one's action as the account: a stolen token's holder, or the owner's own stale copy
    const result = await this.deps.refreshTokens.rotate(token, (trx, reuse) =>
      appendAccountAudit(trx, {
        action: 'account.refresh-token-reused',
        accountId: reuse.accountId,
        actor: {},
        target: { type: 'session', id: reuse.familyId },
        details: { 'session-ended': true },
        origin,
      }),
    );
    switch (result.outcome) {
      case 'invalid':
        throw unauthorized('Invalid refresh token');
      case 'expired':
        throw unauthorized('Refresh token expired');
      case 'locked':
        throw new AccountLockedError();
      case 'reused':
        this.deps.log.warn('account/refresh-token-reuse', 'A rotated refresh token was presented again; its family is revoked', {
          'account-id': result.accountId,
          'family-id': result.familyId,
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
            await appendAccountAudit(trx, {
              action: 'account.logged-out',
              accountId: ended.accountId,
              target: { type: 'session', id: ended.familyId },
              origin,
            });
          }
        })
      : undefined;
    if (familyId) this.deps.log.info('account/logged-out', 'Logged out', { 'family-id': familyId });
  }

  /**
   * The response of a log-in or refresh: the access token names the refresh family as its
   * session (`sid`), when its sign-in happened (`auth_time`), the acting admin of an impersonated
   * one (`act`), and outlives none of them.
   */
  private async session(
    row: AccountColumns,
    refresh: Pick<IssuedRefreshToken, 'familyId' | 'token' | 'expiresAt' | 'authTime'>,
    actorId?: string,
  ): Promise<Session> {
    const account = toUserAccount(row, this.admins, actorId === undefined ? undefined : await impersonatorOf(this.deps.db, actorId));
    const user: AuthUser = {
      id: account.id,
      email: account.email,
      sessionId: refresh.familyId,
      authTime: refresh.authTime,
      ...(actorId === undefined ? {} : { actor: { id: actorId } }),
      ...(account.locale ? { locale: account.locale } : {}),
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
