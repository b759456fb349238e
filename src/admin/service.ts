/**
 * The operator's console (docs/admin.md): finding accounts and organizations, an account's
 * detail, locking and unlocking, the platform's numbers and the admin audit log. Impersonation
 * is in impersonation.ts. Every change is audited in its own transaction, in the admin audit log.
 */
import { sql, type Expression } from 'kysely';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import { decodeAuditCursor, encodeAuditCursor, toAuditEntry } from '../audit/service.js';
import type { AuditDetails } from '../db/schema.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import { conflict, forbidden, notFound } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type {
  AccountSearch,
  AdminAccountDetail,
  AdminAccountPage,
  AdminAuditLogPage,
  AdminAuditQuery,
  AdminOrganizationPage,
  AdminStats,
  OrgSearch,
} from './schemas.js';
import { accountsQuery, searchAccounts, toAdminAccount } from './account-search.js';
import { searchOrganizations } from './organization-search.js';
import { iso } from './search.js';

/** The platform admin rule: a verified email listed in ADMIN_EMAILS. */
export type IsPlatformAdmin = (account: { email: string; emailVerified: boolean }) => boolean;

export interface AdminDeps {
  db: DB;
  refreshTokens: RefreshTokens;
  isPlatformAdmin: IsPlatformAdmin;
  log: Logger;
}

export class AdminService {
  constructor(private readonly deps: AdminDeps) {}

  private accounts() {
    return accountsQuery(this.deps.db);
  }

  /** Accounts by email prefix, then by name prefix, then by a later word of the name; without `q`, newest first (account-search.ts). */
  searchAccounts(query: AccountSearch): Promise<AdminAccountPage> {
    return searchAccounts(this.deps.db, query);
  }

  /** An account with its organizations and roles, live session count and identities; 404 for an unknown id. */
  async account(id: string): Promise<AdminAccountDetail> {
    const db = this.deps.db;
    const row = await this.accounts()
      .select(['a.locked_reason', 'a.subscription_status', 'a.subscription_plan', 'a.subscription_period_end'])
      .where('a.id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('No such account');
    const [organizations, sessions, identities] = await Promise.all([
      db
        .selectFrom('membership as m')
        .innerJoin('organization as o', 'o.id', 'm.organization_id')
        .select(['o.id', 'o.name', 'o.slug', 'o.personal', 'm.role', 'o.subscription_status', 'o.subscription_plan'])
        .where('m.account_id', '=', id)
        .orderBy('o.personal', 'desc')
        .orderBy('o.name')
        .execute(),
      db
        .selectFrom('refresh_family')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', id)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirstOrThrow(),
      db
        .selectFrom('account_identity')
        .select(['provider', 'email', 'created_at', 'last_used_at'])
        .where('account_id', '=', id)
        .orderBy('created_at')
        .execute(),
    ]);
    return {
      ...toAdminAccount(row),
      'platform-admin': this.deps.isPlatformAdmin({ email: row.email, emailVerified: row.email_verified }),
      'locked-at': iso(row.locked_at),
      'locked-reason': row.locked_reason,
      subscription: { status: row.subscription_status, plan: row.subscription_plan, 'current-period-end': iso(row.subscription_period_end) },
      organizations: organizations.map((o) => ({
        id: o.id,
        name: o.name,
        slug: o.slug,
        personal: o.personal,
        role: o.role,
        subscription: { status: o.subscription_status, plan: o.subscription_plan },
      })),
      'session-count': Number(sessions.n),
      identities: identities.map((i) => ({ provider: i.provider, email: i.email, 'created-at': iso(i.created_at)!, 'last-used-at': iso(i.last_used_at) })),
    };
  }

  /**
   * Locks an account: no sign-in of any kind works (403 `account-locked`) and every session it
   * has ends on every instance. Not oneself, not another platform admin (403); 409 when locked already.
   */
  async lock(admin: AuthUser, id: string, reason: string, origin: RequestOrigin): Promise<AdminAccountDetail> {
    if (id === admin.id) throw forbidden('You cannot lock your own account', { reason: 'self' });
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('account').select(['email', 'email_verified', 'locked_at']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!row) throw notFound('No such account');
      if (this.deps.isPlatformAdmin({ email: row.email, emailVerified: row.email_verified })) {
        throw forbidden('A platform admin cannot be locked; remove the address from ADMIN_EMAILS first', { reason: 'platform-admin' });
      }
      if (row.locked_at) throw conflict('The account is locked already', { reason: 'locked' });
      await trx.updateTable('account').set({ locked_at: sql`now()`, locked_reason: reason, locked_by: admin.id }).where('id', '=', id).execute();
      await this.audit(trx, admin, 'admin.account-locked', id, { reason }, origin);
    });
    // committed first: from here no session of it starts, so ending them all leaves none
    const ended = await this.deps.refreshTokens.revokeAllForAccount(id);
    this.deps.log.info('admin/account-locked', 'Account locked; every session ended', { 'account-id': id, 'admin-id': admin.id, sessions: ended.length });
    return this.account(id);
  }

  /** Lets the account sign in again (its ended sessions stay ended); 409 when it is not locked. */
  async unlock(admin: AuthUser, id: string, reason: string | undefined, origin: RequestOrigin): Promise<AdminAccountDetail> {
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('account').select('locked_at').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!row) throw notFound('No such account');
      if (!row.locked_at) throw conflict('The account is not locked', { reason: 'not-locked' });
      await trx.updateTable('account').set({ locked_at: null, locked_reason: null, locked_by: null }).where('id', '=', id).execute();
      await this.audit(trx, admin, 'admin.account-unlocked', id, reason === undefined ? {} : { reason }, origin);
    });
    this.deps.log.info('admin/account-unlocked', 'Account unlocked', { 'account-id': id, 'admin-id': admin.id });
    return this.account(id);
  }

  /** An admin action on an account: in the admin audit log, and in the account's data (its export). */
  private audit(trx: DB, admin: AuthUser, action: string, accountId: string, details: AuditDetails, origin: RequestOrigin) {
    return appendAudit(trx, {
      action,
      accountId,
      actor: { accountId: admin.id },
      target: { type: 'account', id: accountId },
      details,
      origin,
      adminLog: true,
    });
  }

  /** Organizations by name prefix, then by slug prefix; without `q`, newest first (organization-search.ts). */
  searchOrganizations(query: OrgSearch): Promise<AdminOrganizationPage> {
    return searchOrganizations(this.deps.db, query);
  }

  /** The platform's numbers: one pass over the accounts for their counts, one count of organizations, the live subscriptions per plan. */
  async stats(): Promise<AdminStats> {
    const {
      rows: [counts],
    } = await sql<{ accounts: string; verified: string; organizations: string; week: string; month: string }>`
      select count(*) as accounts,
             count(*) filter (where email_verified) as verified,
             count(*) filter (where created_at > now() - interval '7 days') as week,
             count(*) filter (where created_at > now() - interval '30 days') as month,
             (select count(*) from organization) as organizations
      from account`.execute(this.deps.db);
    const plans = await this.deps.db
      .selectFrom('organization')
      .select(['subscription_plan', (eb) => eb.fn.countAll<string>().as('n')])
      .where('subscription_status', 'in', ['active', 'trialing', 'past-due'])
      .where('subscription_plan', 'is not', null)
      .groupBy('subscription_plan')
      .orderBy('subscription_plan')
      .execute();
    return {
      accounts: Number(counts.accounts),
      'verified-accounts': Number(counts.verified),
      organizations: Number(counts.organizations),
      subscriptions: Object.fromEntries(plans.map((p) => [p.subscription_plan!, Number(p.n)])),
      'sign-ups-7d': Number(counts.week),
      'sign-ups-30d': Number(counts.month),
    };
  }

  /** The admin audit log, newest first; every account named comes with its address. */
  async auditLog(query: AdminAuditQuery): Promise<AdminAuditLogPage> {
    const limit = query.limit ?? 50;
    const emailOf = (id: Expression<string | null>) => sql<string | null>`(select x.email from account x where x.id = ${id})`;
    let q = this.deps.db
      .selectFrom('audit_entry as e')
      .select([
        'e.id',
        'e.organization_id',
        'e.action',
        'e.actor_account_id',
        'e.actor_api_key_id',
        'e.target_type',
        'e.target_id',
        'e.impersonated_account_id',
        'e.ip',
        'e.user_agent',
        'e.details',
        'e.created_at',
        emailOf(sql.ref('e.actor_account_id')).as('actor_email'),
        emailOf(sql.ref('e.impersonated_account_id')).as('impersonated_email'),
        // `target_id` is an account's id only where `target_type` says so: cast only then
        emailOf(sql`case when e.target_type = 'account' then e.target_id::uuid end`).as('target_email'),
      ])
      .where('e.admin_log', '=', true);
    if (query['account-id']) q = q.where('e.account_id', '=', query['account-id']);
    if (query.cursor !== undefined) q = q.where('e.id', '<', sql<string>`${decodeAuditCursor(query.cursor, 'query')}::bigint`);
    const rows = await q
      .orderBy('e.id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    return {
      entries: page.map((r) => {
        const { id, ...entry } = toAuditEntry(r);
        return { id, 'organization-id': r.organization_id, ...entry };
      }),
      'next-cursor': rows.length > limit ? encodeAuditCursor(String(page[page.length - 1].id)) : null,
    };
  }
}
