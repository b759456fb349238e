/**
 * Impersonation (docs/admin.md): a platform admin opens a session of an account to see what its
 * owner sees.
 *
 * - The session is an ordinary refresh-token family of the account with the admin recorded as
 *   its actor: its access tokens carry `act: {sub: <admin id>}` (RFC 8693), and it ends one hour
 *   after it began whatever the refreshes (the family's absolute expiry; access tokens never
 *   outlive it).
 * - What it may not do is route data (`impersonation: 'forbidden'`, http/route-gates.ts): the
 *   account's credentials, sign-in methods, API keys and deletion. What it changes is audited with
 *   the admin as actor and the account as `impersonated` (audit/log.ts), in the admin audit log.
 * - Never oneself, never another platform admin (403); a locked account cannot be entered (403
 *   `account-locked`, as every sign-in), a deleted one is not found.
 * - Ending it is ending its session: its access tokens are refused on every instance, its refresh
 *   token no longer works.
 */
import { appendAccountAudit, type ClientOrigin, type RequestOrigin } from '../audit/log.js';
import type { AccountService, Session } from '../account/service.js';
import { AccountLockedError, type RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { conflict, forbidden, notFound } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { IsPlatformAdmin } from './service.js';

/** An impersonated session's whole life, seconds. */
export const IMPERSONATION_SECONDS = 3600;

export interface ImpersonationDeps {
  db: DB;
  accounts: AccountService;
  refreshTokens: RefreshTokens;
  isPlatformAdmin: IsPlatformAdmin;
  log: Logger;
}

export class Impersonation {
  constructor(private readonly deps: ImpersonationDeps) {}

  /** A session of account `id` in which `admin` acts; audited (with `reason`) in the account's log and the admin audit log. */
  async start(admin: AuthUser, id: string, reason: string, origin: ClientOrigin): Promise<Session> {
    if (id === admin.id) throw forbidden('You cannot impersonate yourself', { reason: 'self' });
    const target = await this.deps.db.selectFrom('account').select(['email', 'email_verified', 'locked_at']).where('id', '=', id).executeTakeFirst();
    if (!target) throw notFound('No such account');
    if (this.deps.isPlatformAdmin({ email: target.email, emailVerified: target.email_verified })) {
      throw forbidden('Another platform admin cannot be impersonated', { reason: 'platform-admin' });
    }
    if (target.locked_at) throw new AccountLockedError();
    const session = await this.deps.accounts.openActedSession(
      id,
      { actorAccountId: admin.id, lifetimeSeconds: IMPERSONATION_SECONDS },
      origin,
      (trx, familyId) =>
        appendAccountAudit(trx, {
          action: 'admin.impersonation-started',
          accountId: id,
          actor: { accountId: admin.id },
          target: { type: 'account', id },
          details: { reason, 'session-id': familyId },
          origin,
          impersonatedAccountId: id,
          adminLog: true,
        }),
    );
    this.deps.log.info('admin/impersonation-started', 'Impersonation started', { 'account-id': id, 'admin-id': admin.id });
    return session;
  }

  /** Ends the caller's impersonated session (its own token calls this); 409 for a session that is not one. */
  async stop(user: AuthUser, origin: RequestOrigin): Promise<void> {
    if (!user.actor) throw conflict('This session is not an impersonation', { reason: 'not-impersonating' });
    // the origin names the admin: the entry records the admin as actor, the account as impersonated (audit/log.ts)
    await this.deps.refreshTokens.revokeFamily(user.sessionId, (trx) =>
      appendAccountAudit(trx, {
        action: 'admin.impersonation-stopped',
        accountId: user.id,
        target: { type: 'account', id: user.id },
        details: { 'session-id': user.sessionId },
        origin,
      }),
    );
    this.deps.log.info('admin/impersonation-stopped', 'Impersonation stopped', { 'account-id': user.id, 'admin-id': user.actor.id });
  }
}
