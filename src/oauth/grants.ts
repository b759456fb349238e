/**
 * A person's grants to apps: their connected apps (`oauth_grant`, one row per grant the provider
 * saved). Ending one (the person revokes it, its app is deleted, a code or refresh token is used
 * twice) marks it revoked and notifies `session_revoked` with its id in the same transaction,
 * with the audit entry; its access tokens carry that id as `sid`, so every instance refuses them
 * within a second, as for an ended session (src/auth/revoked-sessions.ts); the provider's
 * artifacts of the grant (refresh tokens, codes) are deleted, and the consent with them.
 */
import { sql, type Kysely } from 'kysely';
import type { AdapterPayload } from 'oidc-provider';
import { appendAccountAudit, NO_ORIGIN, type RequestOrigin } from '../audit/log.js';
import type { RevocationSink } from '../auth/refresh-tokens.js';
import { REVOCATION_CHANNEL } from '../auth/revoked-sessions.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema, GrantEndReason } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import { metadataDocumentHost } from './client-metadata.js';
import { REGISTERED_CLIENT_IDLE_SECONDS } from './registration.js';
import type { ConnectedApps } from './schemas.js';

export type { GrantEndReason } from '../db/schema.js';

/** The scopes a grant payload holds: its OpenID scopes and its API scopes (of every resource). */
export function scopesOfGrant(payload: AdapterPayload): string[] {
  const openid = (payload.openid as { scope?: string } | undefined)?.scope ?? '';
  const resources = Object.values((payload.resources as Record<string, string> | undefined) ?? {});
  return [...new Set([openid, ...resources].join(' ').split(' ').filter(Boolean))];
}

export interface GrantsDeps {
  db: DB;
  log: Logger;
  /** this process's set of ended sessions (the other instances hear the notification) */
  revocations: RevocationSink;
  /** `APP_URL/mcp`: a grant reaching it is an AI assistant */
  mcpResource: string;
  /** counts grants created and ended (metrics) */
  count?(event: 'created' | 'revoked'): void;
}

export class Grants {
  constructor(private readonly deps: GrantsDeps) {}

  /** The provider saved a grant: its connected-app record follows (created, or its scopes and expiry updated). */
  async saved(id: string, payload: AdapterPayload, expiresAt: Date | null): Promise<void> {
    if (typeof payload.accountId !== 'string' || typeof payload.clientId !== 'string') return;
    const scopes = scopesOfGrant(payload);
    const resources = Object.keys((payload.resources as Record<string, string> | undefined) ?? {});
    const expires = expiresAt ?? new Date(Date.now() + 30 * 86_400_000);
    await this.deps.db
      .insertInto('oauth_grant')
      .values({ id, account_id: payload.accountId, client_id: payload.clientId, scopes, resources, expires_at: expires })
      .onConflict((oc) => oc.column('id').doUpdateSet({ scopes, resources, expires_at: expires }))
      .execute();
    // a registered client lives while a grant uses it, then its idle time (registration.ts)
    await this.deps.db
      .updateTable('oauth_model')
      .set({ expires_at: sql`greatest(expires_at, ${new Date(expires.getTime() + REGISTERED_CLIENT_IDLE_SECONDS * 1000)}::timestamptz)` })
      .where('model', '=', 'Client')
      .where('id', '=', payload.clientId)
      .where('expires_at', 'is not', null)
      .execute();
  }

  /**
   * The newest live grant of an account to an app (consent is remembered in it), or with
   * `sessionId` the one that session made: a grant belongs to its session, and is only ever
   * extended or reused by it.
   */
  async live(accountId: string, clientId: string, sessionId?: string): Promise<{ id: string; scopes: string[] } | undefined> {
    let query = this.deps.db
      .selectFrom('oauth_grant')
      .select(['id', 'scopes'])
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`);
    if (sessionId !== undefined) query = query.where('session_id', '=', sessionId);
    return query.orderBy('created_at', 'desc').executeTakeFirst();
  }

  /** A token was issued for the grant. */
  async touch(id: string): Promise<void> {
    await this.deps.db.updateTable('oauth_grant').set({ last_used_at: sql`now()` }).where('id', '=', id).execute();
  }

  /** The account's live grants, newest first, with their apps' names and organizations. */
  async list(accountId: string): Promise<ConnectedApps> {
    const rows = await this.deps.db
      .selectFrom('oauth_grant as g')
      .leftJoin('oauth_app as a', 'a.client_id', 'g.client_id')
      .leftJoin('organization as o', 'o.id', 'a.organization_id')
      .leftJoin('oauth_model as m', (join) => join.onRef('m.id', '=', 'g.client_id').on('m.model', '=', 'Client'))
      .select([
        'g.id',
        'g.client_id',
        'g.scopes',
        'g.resources',
        'g.created_at',
        'g.last_used_at',
        'a.name as app_name',
        'o.id as org_id',
        'o.name as org_name',
      ])
      .select(sql<string | null>`coalesce(m.payload->>'client_name', g.client_name)`.as('registered_name'))
      .where('g.account_id', '=', accountId)
      .where('g.revoked_at', 'is', null)
      .where('g.expires_at', '>', sql<Date>`now()`)
      .orderBy('g.created_at', 'desc')
      .execute();
    return {
      'connected-apps': rows.map((row) => ({
        id: row.id,
        'client-id': row.client_id,
        name: row.app_name ?? row.registered_name ?? row.client_id,
        organization: row.org_id && row.org_name ? { id: row.org_id, name: row.org_name } : null,
        reviewed: row.app_name !== null,
        host: metadataDocumentHost(row.client_id),
        assistant: row.resources.includes(this.deps.mcpResource),
        scopes: row.scopes,
        'created-at': row.created_at.toISOString(),
        'last-used-at': row.last_used_at ? row.last_used_at.toISOString() : null,
      })),
    };
  }

  /** The person revokes one of their grants: false when it is not a live grant of theirs. */
  async revokeByAccount(accountId: string, grantId: string, origin: RequestOrigin): Promise<boolean> {
    const ended = await this.deps.db.transaction().execute((trx) => this.end(trx, { id: grantId, accountId }, 'account', origin));
    this.after(ended);
    return ended.length > 0;
  }

  /** The provider destroyed a grant (a code or refresh token presented twice, or its expiry). */
  async destroyedByProvider(id: string, reason: GrantEndReason): Promise<void> {
    const ended = await this.deps.db.transaction().execute((trx) => this.end(trx, { id }, reason, NO_ORIGIN));
    this.after(ended);
    if (reason === 'refresh-token-reuse')
      for (const grant of ended)
        this.deps.log.warn('oauth/grant-token-reuse', 'An authorization code or refresh token was used twice: its grant is revoked', {
          'grant-id': grant.id,
          'client-id': grant.client_id,
        });
  }

  /**
   * Ends live grants in the caller's transaction (an app's deletion): revoked, notified, their
   * artifacts deleted, each with its audit entry. Call {@link after} once the transaction committed.
   */
  async end(
    trx: Kysely<DatabaseSchema>,
    which: { id?: string; accountId?: string; clientId?: string },
    reason: GrantEndReason,
    origin: RequestOrigin,
  ): Promise<Array<{ id: string; account_id: string; client_id: string }>> {
    let update = trx.updateTable('oauth_grant').set({ revoked_at: sql`now()`, revoked_reason: reason }).where('revoked_at', 'is', null);
    if (which.id) update = update.where('id', '=', which.id);
    if (which.accountId) update = update.where('account_id', '=', which.accountId);
    if (which.clientId) update = update.where('client_id', '=', which.clientId);
    const ended = await update.returning(['id', 'account_id', 'client_id']).execute();
    if (ended.length === 0) return ended;
    const ids = ended.map((g) => g.id);
    await trx
      .deleteFrom('oauth_model')
      .where((eb) => eb.or([eb('grant_id', 'in', ids), eb.and([eb('model', '=', 'Grant'), eb('id', 'in', ids)])]))
      .execute();
    for (const grant of ended) {
      await sql`select pg_notify(${REVOCATION_CHANNEL}, ${grant.id})`.execute(trx);
      await appendAccountAudit(trx, {
        action: 'oauth-grant.revoked',
        accountId: grant.account_id,
        ...(reason === 'account' ? {} : { actor: {} }),
        target: { type: 'oauth-grant', id: grant.id },
        details: { 'client-id': grant.client_id, reason },
        origin,
      });
    }
    return ended;
  }

  /** After the ending transaction committed: this process refuses the grants' tokens at once. */
  after(ended: ReadonlyArray<{ id: string }>): void {
    if (ended.length === 0) return;
    this.deps.revocations.markRevoked(ended.map((g) => g.id));
    for (const _ of ended) this.deps.count?.('revoked');
  }
}
