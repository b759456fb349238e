/**
 * Platform administration in the client (docs/admin.md): the accounts and organizations found by
 * a prefix, page after page (the server's `next-cursor`), one account's detail with locking and
 * impersonation, the platform's numbers and the admin audit log. Every request goes to
 * `/api/admin/…`, which answers 404 to anyone but a platform admin: the pages say "not found".
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

export interface AdminAccountRow {
  id: string;
  email: string;
  name: string | null;
  'created-at': string;
  'email-verified': boolean;
  locked: boolean;
  'two-factor-enabled': boolean;
  'last-seen-at': string | null;
}

export interface AdminAccountDetail extends AdminAccountRow {
  'platform-admin': boolean;
  'locked-at': string | null;
  'locked-reason': string | null;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null };
  organizations: Array<{ id: string; name: string; slug: string; personal: boolean; role: string; subscription: { status: string; plan: string | null } }>;
  'session-count': number;
  identities: Array<{ provider: string; email: string | null; 'created-at': string; 'last-used-at': string | null }>;
}

export interface AdminOrgRow {
  id: string;
  name: string;
  slug: string;
  personal: boolean;
  'created-at': string;
  'member-count': number;
  subscription: { status: string; plan: string | null; 'current-period-end': string | null; 'cancel-at-period-end': boolean };
}

export interface AdminAuditEntry {
  id: string;
  action: string;
  actor: { 'account-id': string | null; email?: string; 'api-key-id'?: string | null };
  impersonated?: { 'account-id': string | null; email?: string } | null;
  target: { type: string; id: string; email?: string } | null;
  ip: string | null;
  details: Record<string, string | number | boolean | null>;
  'created-at': string;
}

export interface AdminStats {
  accounts: number;
  'verified-accounts': number;
  organizations: number;
  subscriptions: Record<string, number>;
  'sign-ups-7d': number;
  'sign-ups-30d': number;
}

/** A list read page by page; `q` is the prefix it was asked for. */
export interface PagedList<T> {
  status: 'loading' | 'ready' | 'missing' | 'failed';
  q: string;
  items: T[];
  nextCursor: string | null;
  loadingMore: boolean;
}

export interface AdminState {
  adminAccounts?: PagedList<AdminAccountRow>;
  adminOrgs?: PagedList<AdminOrgRow>;
  adminAudit?: PagedList<AdminAuditEntry>;
  adminAccount?: { id: string; status: 'loading' | 'ready' | 'missing' | 'failed'; account?: AdminAccountDetail };
  adminStats?: { status: 'loading' | 'ready' | 'missing' | 'failed'; stats?: AdminStats };
}

declare module '../shell/state.js' {
  interface AppState extends AdminState {}
}

export const adminAccountPath = (id: string) => `/admin/accounts/${id}`;
/** `/admin/accounts/<id>` -> the id */
export const adminAccountIdOf = (path: string) => /^\/admin\/accounts\/([0-9a-f-]{36})\/?$/i.exec(path)?.[1];

/** a platform admin outside an impersonation: the only one the admin pages are for */
export const isPlatformAdmin = (state: AppState) => state.account?.['platform-admin'] === true && !state.account['impersonated-by'];

/** The three lists: their state field, their URL and the field of the answer that holds the items. */
const LISTS = {
  accounts: { field: 'adminAccounts', url: 'admin/accounts', items: 'accounts', limit: 20 },
  orgs: { field: 'adminOrgs', url: 'admin/orgs', items: 'organizations', limit: 20 },
  audit: { field: 'adminAudit', url: 'admin/audit-log', items: 'entries', limit: 50 },
} as const;
export type AdminList = keyof typeof LISTS;

type Lists = Pick<AdminState, 'adminAccounts' | 'adminOrgs' | 'adminAudit'>;
const listOf = (state: AppState, list: AdminList) => (state as Lists)[LISTS[list].field] as PagedList<{ id: string }> | undefined;
const withList = (state: AppState, list: AdminList, value: PagedList<{ id: string }>): AppState => ({ ...state, [LISTS[list].field]: value });

function registerLists(core: EventCore<AppState>): void {
  const request = (list: AdminList, q: string, cursor?: string) => ({
    url: LISTS[list].url,
    queryParams: { limit: LISTS[list].limit, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) },
    onSuccess: ['admin/list-loaded', list, q],
    onFailure: ['admin/list-failed', list, q],
  });
  core
    // a fresh first page for the prefix (empty: the newest first)
    .regEvent('admin/list-open', ({ state }, [, list, q]) => {
      const prefix = ((q as string | undefined) ?? '').trim();
      return {
        db: withList(state, list as AdminList, { status: 'loading', q: prefix, items: [], nextCursor: null, loadingMore: false }),
        'http/auth-api': request(list as AdminList, prefix),
      };
    })
    .regEvent('admin/list-more', ({ state }, [, list]) => {
      const page = listOf(state, list as AdminList);
      if (!page?.nextCursor || page.loadingMore) return;
      return { db: withList(state, list as AdminList, { ...page, loadingMore: true }), 'http/auth-api': request(list as AdminList, page.q, page.nextCursor) };
    })
    .regEvent('admin/list-loaded', ({ state }, [, list, q, body]) => {
      const page = listOf(state, list as AdminList);
      if (!page || page.q !== q) return;
      const b = body as Record<string, unknown> & { 'next-cursor': string | null };
      const items = b[LISTS[list as AdminList].items] as Array<{ id: string }>;
      const seen = new Set(page.items.map((i) => i.id));
      return {
        db: withList(state, list as AdminList, {
          ...page,
          status: 'ready',
          items: [...page.items, ...items.filter((i) => !seen.has(i.id))],
          nextCursor: b['next-cursor'],
          loadingMore: false,
        }),
      };
    })
    .regEvent('admin/list-failed', ({ state }, [, list, q, failure]) => {
      const page = listOf(state, list as AdminList);
      if (!page || page.q !== q) return;
      const missing = (failure as { type?: string }).type === 'not-found';
      return {
        db: withList(state, list as AdminList, {
          ...page,
          status: missing ? 'missing' : page.status === 'loading' ? 'failed' : page.status,
          loadingMore: false,
        }),
        dispatch: missing ? undefined : ['request/failed', failure],
      };
    });
}

/** the state with a `log-in-response`'s session (switching to an impersonation, or back), set at once so no page sees none between */
function sessionOf(state: AppState, response: unknown): AppState {
  const r = response as { 'access-token': string; account: AppState['account'] };
  return { ...state, token: r['access-token'], account: r.account, busy: false };
}

export function registerAdmin(core: EventCore<AppState>): void {
  registerLists(core);
  core
    .regEvent('admin/stats-open', ({ state }) => ({
      db: { ...state, adminStats: { status: 'loading' } },
      'http/auth-api': { url: 'admin/stats', onSuccess: ['admin/stats-loaded'], onFailure: ['admin/stats-failed'] },
    }))
    .regEvent('admin/stats-loaded', ({ state }, [, stats]) => ({ db: { ...state, adminStats: { status: 'ready', stats: stats as AdminStats } } }))
    .regEvent('admin/stats-failed', ({ state }, [, failure]) => {
      const missing = (failure as { type?: string }).type === 'not-found';
      return { db: { ...state, adminStats: { status: missing ? 'missing' : 'failed' } }, dispatch: missing ? undefined : ['request/failed', failure] };
    })
    .regEvent('admin/account-open', ({ state }, [, id]) => ({
      db: { ...state, adminAccount: { id: id as string, status: 'loading' } },
      'http/auth-api': { url: `admin/accounts/${id}`, onSuccess: ['admin/account-loaded', id], onFailure: ['admin/account-failed', id] },
    }))
    .regEvent('admin/account-loaded', ({ state }, [, id, account]) => {
      if (state.adminAccount?.id !== id) return;
      return { db: { ...state, busy: false, adminAccount: { id: id as string, status: 'ready', account: account as AdminAccountDetail } } };
    })
    .regEvent('admin/account-failed', ({ state }, [, id, failure]) => {
      if (state.adminAccount?.id !== id) return;
      const missing = (failure as { type?: string }).type === 'not-found';
      return {
        db: { ...state, adminAccount: { id: id as string, status: missing ? 'missing' : 'failed' } },
        dispatch: missing ? undefined : ['request/failed', failure],
      };
    })
    // lock, unlock: answered with the account as it is now
    .regEvent('admin/account-action', ({ state }, [, action, form]) => {
      const id = state.adminAccount?.id;
      if (!id) return;
      const reason = ((form as { reason?: string }).reason ?? '').trim();
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `admin/accounts/${id}/${action}`,
          method: 'post',
          body: reason ? { reason } : {},
          onSuccess: ['admin/account-changed', id, action],
          onFailure: ['form/failed', `admin-${action}`],
        },
      };
    })
    .regEvent('admin/account-changed', ({ state }, [, id, action, account]) => ({
      db: { ...state, busy: false, formResets: { ...state.formResets, [`admin-${action}`]: (state.formResets?.[`admin-${action}`] ?? 0) + 1 } },
      dispatch: ['admin/account-loaded', id, account],
      dispatchN: [['toast/info', { message: action === 'lock' ? t('Account locked: its sessions have ended') : t('Account unlocked') }]],
    }))
    // the answer is a session of the account: the browser switches to it (the admin's own stays in its cookie)
    .regEvent('admin/impersonate', ({ state }, [, form]) => {
      const id = state.adminAccount?.id;
      if (!id) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `admin/accounts/${id}/impersonate`,
          method: 'post',
          body: { reason: ((form as { reason?: string }).reason ?? '').trim() },
          onSuccess: ['admin/impersonating'],
          onFailure: ['form/failed', 'admin-impersonate'],
        },
      };
    })
    .regEvent('admin/impersonating', ({ state }, [, response]) => ({
      db: { ...sessionOf(state, response), adminAccount: undefined, adminAccounts: undefined },
      dispatch: ['router/navigate', { route: 'account' }],
    }))
    // ends the impersonated session; a refresh then restores the admin's own (its cookie never changed)
    .regEvent('impersonation/stop', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'admin/impersonation/stop',
        method: 'post',
        body: {},
        onSuccess: ['impersonation/stopped'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    // the state stays until the admin's own session is back: a page without a token would be sent to log in meanwhile
    .regEvent('impersonation/stopped', () => ({
      'http/api': { url: 'account/refresh', method: 'post', body: {}, onSuccess: ['impersonation/restored'], onFailure: ['auth/logged-out'] },
    }))
    .regEvent('impersonation/restored', ({ state }, [, response]) => ({
      db: sessionOf(state, response),
      dispatch: ['router/navigate', { route: 'admin-accounts' }],
    }));
}
