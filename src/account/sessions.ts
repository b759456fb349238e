/**
 * An account's sessions: one per live refresh family (a log-in not revoked and not expired),
 * with where it came from and when it was last used; ending one revokes its family, so its
 * refresh token stops working and its access tokens are refused on every instance.
 */
import { sql } from 'kysely';
import { appendAccountAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { notFound } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { AccountSession } from './lifecycle-schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AccountSessions {
  constructor(
    private readonly db: DB,
    private readonly refreshTokens: RefreshTokens,
    private readonly log: Logger,
  ) {}

  /** The live sessions of an account, most recently used first; `current` marks the caller's (`sid`). */
  async list(accountId: string, currentSessionId?: string): Promise<AccountSession[]> {
    const rows = await this.db
      .selectFrom('refresh_family')
      .select(['id', 'created_at', 'last_used_at', 'user_agent', 'ip'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .orderBy(sql`coalesce(last_used_at, created_at)`, 'desc')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      'created-at': r.created_at.toISOString(),
      'last-used-at': (r.last_used_at ?? r.created_at).toISOString(),
      'user-agent': r.user_agent,
      ip: r.ip,
      current: r.id === currentSessionId,
    }));
  }

  /** Ends one of the caller's live sessions; 404 for any other id (another account's, ended, unknown). Recorded in the audit log. */
  async end(user: AuthUser, sessionId: string, origin: RequestOrigin): Promise<void> {
    if (!UUID.test(sessionId)) throw notFound('No such session');
    const owned = await this.db
      .selectFrom('refresh_family')
      .select('id')
      .where('id', '=', sessionId)
      .where('account_id', '=', user.id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    const own = owned?.id === user.sessionId;
    const ended =
      owned &&
      (await this.refreshTokens.revokeFamily(owned.id, (trx) =>
        appendAccountAudit(trx, {
          action: 'account.session-ended',
          accountId: user.id,
          target: { type: 'session', id: owned.id },
          details: { own },
          origin,
        }),
      ));
    if (!owned || !ended) throw notFound('No such session');
    this.log.info('account/session-ended', 'Session ended', { 'account-id': user.id, 'family-id': owned.id, own });
  }
}
