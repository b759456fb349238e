/**
 * The statements that end sessions (docs/security.md, "Tokens": ended sessions). A session (refresh
 * family) ends when its `revoked_at` is set and its id notified on `session_revoked` in the same
 * statement, so every instance hears of it exactly when it commits, and never if it rolls back;
 * the process that ended it records it at once (RefreshTokens, revoked-sessions.ts). Ending every
 * session of an account (password reset, deletion, locking, suspension) also ends its OAuth grants
 * (src/oauth/grants.ts), notified the same way. Each runs on the caller's executor: inside its
 * transaction when the change has effects that must commit with it.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { REVOCATION_CHANNEL } from './revoked-sessions.js';

/** A session (refresh family) that ended, with its account (null for a deleted account's). */
export interface EndedSession {
  familyId: string;
  accountId: string | null;
}

/**
 * The person's own audit entries `oauth-grant.revoked` (`client-id`, `reason`) for grants a
 * statement ended (`source`: a CTE of `id, account_id, client_id`), as src/oauth/grants.ts writes
 * them for the grants it ends; the system is the actor.
 */
function grantsRevokedAudit(source: RawBuilder<unknown>, reason: string): RawBuilder<unknown> {
  return sql`insert into audit_entry (organization_id, account_id, action, target_type, target_id, details)
    select o.id, g.account_id, 'oauth-grant.revoked', 'oauth-grant', g.id, jsonb_build_object('client-id', g.client_id, 'reason', ${reason}::text)
    from ${source} g left join organization o on o.personal_account_id = g.account_id`;
}

/**
 * Ends the account's OAuth grants (its connected apps: their tokens name the grant as `sid`) and
 * notifies each like a session, in one statement; their provider records are deleted with them.
 */
export async function endGrantsOf(executor: Kysely<DatabaseSchema>, accountId: string, reason: 'account' | 'password-changed' = 'account'): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    with ended as (
      update oauth_grant set revoked_at = clock_timestamp(), revoked_reason = ${reason}
      where account_id = ${accountId} and revoked_at is null
      returning id, account_id, client_id
    ), purged as (
      delete from oauth_model m using ended e where m.grant_id = e.id or (m.model = 'Grant' and m.id = e.id)
    ), audited as (
      ${grantsRevokedAudit(sql`ended`, reason)}
    )
    select id, pg_notify(${REVOCATION_CHANNEL}, id) from ended`.execute(executor);
  return rows.map((r) => r.id);
}

/** What ending sessions ended: the sessions, and the OAuth grants they had consented to. */
export interface Ended {
  sessions: EndedSession[];
  /** grants whose consenting session ended (their tokens name the grant as `sid`) */
  grants: string[];
}

/**
 * Sets `revoked_at` on the matching unrevoked families and notifies each one's id on
 * `session_revoked`, in one statement: the notifications are delivered when it commits, and
 * not at all if it rolls back. The timestamp is the statement's clock, not the transaction's start.
 * The same statement ends what the sessions made with the OAuth provider: the grants they
 * consented to (revoked and notified like sessions, their provider records deleted) and the
 * provider's own browser sessions their sign-ins made, so no authorization outlives the product
 * session it rode on.
 */
export async function revokeFamiliesWhere(executor: Kysely<DatabaseSchema>, condition: RawBuilder<unknown>): Promise<Ended> {
  const { rows } = await sql<{ kind: 'session' | 'grant'; id: string; account_id: string | null }>`
    with revoked as (
      update refresh_family set revoked_at = clock_timestamp()
      where ${condition} and revoked_at is null
      returning id, account_id
    ), grants as (
      update oauth_grant set revoked_at = clock_timestamp(), revoked_reason = 'session-ended'
      where session_id in (select id from revoked) and revoked_at is null
      returning id, account_id, client_id
    ), purged as (
      delete from oauth_model m using grants g where m.grant_id = g.id or (m.model = 'Grant' and m.id = g.id)
    ), audited as (
      ${grantsRevokedAudit(sql`grants`, 'session-ended')}
    ), signed_out as (
      delete from oauth_model where model = 'Session' and session_id in (select id from revoked)
    )
    select 'session' as kind, id::text as id, account_id, pg_notify(${REVOCATION_CHANNEL}, id::text) from revoked
    union all
    select 'grant' as kind, id, account_id, pg_notify(${REVOCATION_CHANNEL}, id) from grants`.execute(executor);
  return {
    sessions: rows.filter((r) => r.kind === 'session').map((r) => ({ familyId: r.id, accountId: r.account_id })),
    grants: rows.filter((r) => r.kind === 'grant').map((r) => r.id),
  };
}
