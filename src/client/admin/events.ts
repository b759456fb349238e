/**
 * Platform administration in the client (docs/admin.md), for accounts with `platform-admin`:
 * the accounts search and an account's page (lock, unlock, impersonate), organizations, the
 * numbers, the admin audit log; and the impersonation banner's "stop".
 *
 * Starting or stopping an impersonation loads the app afresh at its destination: the browser's
 * session is then the one the server's cookies name (the impersonation's, or the admin's own
 * again), and nothing of the other identity stays in the state.
 */
import type { EventCore } from '../core.js';

export interface AdminAccount {
  id: string;
  email: string;
  name: string | null;
  'created-at': string;
  'email-verified': boolean;
  locked: boolean;
  'two-factor-enabled': boolean;
  'last-seen-at': string | null;
}

export interface AdminAccountDetail extends AdminAccount {
  'platform-admin': boolean;
  'locked-at': string | null;
  'locked-reason': string | null;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null };
  organizations: Array<{ id: string; name: string; slug: string; personal: boolean; role: string; subscription: { status: string; plan: string | null } }>;
  'session-count': number;
  identities: Array<{ provider: string; email: string | null; 'created-at': string; 'last-used-at': string | null }>;
}

export interface AdminOrganization {
  id: string;
  name: string;
  slug: string;
  personal: boolean;
  'created-at': string;
  'member-count': number;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null; 'cancel-at-period-end': boolean };
}

export interface AdminStats {
  accounts: number;
  'verified-accounts': number;
  organizations: number;
  subscriptions: Record<string, number>;
  'sign-ups-7d': number;
  'sign-ups-30d': number;
}

export interface AdminAuditEntry {
  id: string;
  'organization-id': string | null;
  action: string;
  actor: { 'account-id': string | null; email?: string; 'api-key-id': string | null };
  target: { type: string; id: string; email?: string } | null;
  impersonated?: { 'account-id': string; email?: string };
  ip: string | null;
  details: Record<string, string | number | boolean | null>;
  'created-at': string;
}

/** A list read a page at a time: what is shown, the next page's cursor, the state of the request. */
export interface Listing<T> {
  q: string;
  items: T[];
  nextCursor: string | null;
  status: 'loading' | 'ready' | 'failed';
  loadingMore: boolean;
}

export interface AdminState {
  adminAccounts?: Listing<AdminAccount>;
  adminAccount?: { id: string; status: 'loading' | 'ready' | 'missing' | 'failed'; account?: AdminAccountDetail };
  adminOrgs?: Listing<AdminOrganization>;
  adminStats?: { status: 'loading' | 'ready' | 'failed'; stats?: AdminStats };
  adminAudit?: Listing<AdminAuditEntry>;
  /** the account page's pending action, confirmed in a dialog */
  adminConfirm?: { action: 'lock' | 'unlock' | 'impersonate'; reason: string };
}

export interface AdminIo {
  /** loads the app afresh at a path (a new identity: nothing of the old one stays) */
  reloadAt(path: string): void;
}

export const ADMIN_PAGE_SIZE = 25;

/** The admin pages' routes (app.ts lists them with their paths). */
export type AdminRoute = 'admin' | 'admin-account' | 'admin-orgs' | 'admin-stats' | 'admin-audit';

/** What of the app's state the admin events read besides their own: the signed-in account, and whether a request is under way. */
export interface AdminHost extends AdminState {
  account?: { id: string; 'platform-admin'?: boolean };
  busy: boolean;
}

/** `/admin/accounts/<id>` -> the id */
export function adminAccountIdOf(path: string): string | undefined {
  return /^\/admin\/accounts\/([0-9a-f-]{36})\/?$/i.exec(path)?.[1];
}

export const adminAccountPath = (id: string) => `/admin/accounts/${id}`;

type ListKey = 'adminAccounts' | 'adminOrgs' | 'adminAudit';
const LISTS: Record<ListKey, { url: string; items: string }> = {
  adminAccounts: { url: 'admin/accounts', items: 'accounts' },
  adminOrgs: { url: 'admin/orgs', items: 'organizations' },
  adminAudit: { url: 'admin/audit-log', items: 'entries' },
};

export function registerAdmin<S extends AdminHost>(core: EventCore<S>, io: AdminIo): void {
  core.regFx('admin/reload-at', (path: string) => io.reloadAt(path));

  core
    // the admin pages load what they show when they open (the view dispatches this with the route)
    .regEvent('admin/page-enter', ({ state }, [, route]) => {
      if (!state.account?.['platform-admin']) return;
      switch (route as AdminRoute) {
        case 'admin': return state.adminAccounts ? undefined : { dispatch: ['admin/list', 'adminAccounts', ''] };
        case 'admin-orgs': return state.adminOrgs ? undefined : { dispatch: ['admin/list', 'adminOrgs', ''] };
        case 'admin-audit': return { dispatch: ['admin/list', 'adminAudit', ''] };
        case 'admin-stats': return {
          db: { ...state, adminStats: { status: 'loading', stats: state.adminStats?.stats } },
          'http/auth-api': { url: 'admin/stats', onSuccess: ['admin/stats-loaded'], onFailure: ['admin/stats-failed'] },
        };
        case 'admin-account': {
          const id = adminAccountIdOf(location.pathname);
          return id ? { dispatch: ['admin/account-open', id] } : { db: { ...state, adminAccount: { id: '', status: 'missing' } } };
        }
        default: return undefined;
      }
    })
    .regEvent('admin/list', ({ state }, [, key, q]) => {
      const k = key as ListKey;
      const query = String(q ?? '').trim();
      const listing: Listing<unknown> = { q: query, items: [], nextCursor: null, status: 'loading', loadingMore: false };
      return {
        db: { ...state, [k]: listing },
        'http/auth-api': {
          url: LISTS[k].url, queryParams: { q: query || undefined, limit: ADMIN_PAGE_SIZE },
          onSuccess: ['admin/list-loaded', k, query, false], onFailure: ['admin/list-failed', k, query],
        },
      };
    })
    .regEvent('admin/list-more', ({ state }, [, key]) => {
      const k = key as ListKey;
      const listing = state[k] as Listing<unknown> | undefined;
      if (!listing?.nextCursor || listing.loadingMore) return;
      return {
        db: { ...state, [k]: { ...listing, loadingMore: true } },
        'http/auth-api': {
          url: LISTS[k].url, queryParams: { q: listing.q || undefined, limit: ADMIN_PAGE_SIZE, cursor: listing.nextCursor },
          onSuccess: ['admin/list-loaded', k, listing.q, true], onFailure: ['admin/list-failed', k, listing.q],
        },
      };
    })
    .regEvent('admin/list-loaded', ({ state }, [, key, q, more, body]) => {
      const k = key as ListKey;
      const listing = state[k] as Listing<{ id: string }> | undefined;
      // an answer to a search that another one replaced meanwhile
      if (!listing || listing.q !== q) return;
      const b = body as Record<string, unknown>;
      const page = b[LISTS[k].items] as Array<{ id: string }>;
      const seen = new Set(more ? listing.items.map((i) => i.id) : []);
      const items = [...(more ? listing.items : []), ...page.filter((i) => !seen.has(i.id))];
      return { db: { ...state, [k]: { ...listing, items, nextCursor: b['next-cursor'] as string | null, status: 'ready', loadingMore: false } } };
    })
    .regEvent('admin/list-failed', ({ state }, [, key, q, failure]) => {
      const k = key as ListKey;
      const listing = state[k] as Listing<unknown> | undefined;
      if (!listing || listing.q !== q) return;
      return {
        db: { ...state, [k]: { ...listing, status: listing.status === 'loading' ? 'failed' : listing.status, loadingMore: false } },
        dispatch: ['request/failed', failure],
      };
    })
    .regEvent('admin/stats-loaded', ({ state }, [, stats]) => ({ db: { ...state, adminStats: { status: 'ready', stats: stats as AdminStats } } }))
    .regEvent('admin/stats-failed', ({ state }, [, failure]) => ({
      db: { ...state, adminStats: { status: 'failed' } },
      dispatch: ['request/failed', failure],
    }))

    .regEvent('admin/account-open', ({ state }, [, id]) => ({
      db: { ...state, adminConfirm: undefined, adminAccount: { id: id as string, status: 'loading', account: state.adminAccount?.id === id ? state.adminAccount?.account : undefined } },
      'http/auth-api': { url: `admin/accounts/${id}`, onSuccess: ['admin/account-loaded', id], onFailure: ['admin/account-failed', id] },
    }))
    .regEvent('admin/account-loaded', ({ state }, [, id, account]) => {
      if (state.adminAccount?.id !== id) return;
      const a = account as AdminAccountDetail;
      // the search's row of this account shows what the page shows
      const list = state.adminAccounts;
      const adminAccounts = list && { ...list, items: list.items.map((i) => (i.id === a.id ? { ...i, locked: a.locked } : i)) };
      return { db: { ...state, adminAccounts, adminAccount: { id: a.id, status: 'ready', account: a }, busy: false } };
    })
    .regEvent('admin/account-failed', ({ state }, [, id, failure]) => {
      if (state.adminAccount?.id !== id) return;
      const missing = (failure as { type?: string }).type === 'not-found';
      return {
        db: { ...state, adminAccount: { id: id as string, status: missing ? 'missing' : 'failed' } },
        dispatch: missing ? undefined : ['request/failed', failure],
      };
    })

    // lock, unlock and impersonate are asked for with a reason, then confirmed in a dialog
    .regEvent('admin/confirm', ({ state }, [, action, reason]) => ({
      db: { ...state, adminConfirm: { action: action as 'lock' | 'unlock' | 'impersonate', reason: String(reason ?? '').trim() } },
    }))
    .regEvent('admin/confirm-cancel', ({ state }) => ({ db: { ...state, adminConfirm: undefined } }))
    .regEvent('admin/confirmed', ({ state }) => {
      const pending = state.adminConfirm;
      const id = state.adminAccount?.id;
      if (!pending || !id) return;
      const body = pending.reason ? { reason: pending.reason } : {};
      const onFailure = [['request/failed'], ['app/idle']];
      const db = { ...state, adminConfirm: undefined, busy: true };
      if (pending.action === 'impersonate') {
        return { db, 'http/auth-api': { url: `admin/accounts/${id}/impersonate`, method: 'post', body, onSuccess: ['admin/impersonating'], onFailureN: onFailure } };
      }
      return {
        db,
        'http/auth-api': {
          url: `admin/accounts/${id}/${pending.action}`, method: 'post', body,
          onSuccessN: [['admin/account-loaded', id], ['toast/info', { message: pending.action === 'lock' ? 'Account locked; its sessions ended.' : 'Account unlocked.' }]],
          onFailureN: onFailure,
        },
      };
    })
    // the impersonation's cookie is set: the app starts again in its session
    .regEvent('admin/impersonating', () => ({ 'admin/reload-at': '/account' }))
    .regEvent('admin/stop', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'admin/impersonation/stop', method: 'post', body: {},
        onSuccess: ['admin/stopped', state.account?.id], onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    // back in the admin's own session, on the page of the account it was looking at
    .regEvent('admin/stopped', (_ctx, [, accountId]) => ({ 'admin/reload-at': accountId ? adminAccountPath(accountId as string) : '/admin' }));
}
