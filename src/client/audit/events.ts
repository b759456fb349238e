/**
 * An organization's audit log in the client: the first page when the page opens, older pages
 * with "load more" (the server's `next-cursor`). A member below admin is told so (403), a
 * non-member that the organization does not exist for it (404).
 */
import type { AppState } from '../shell/state.js';
import type { EventCore } from '../core.js';

export interface AuditEntry {
  id: string;
  action: string;
  actor: { 'account-id': string | null; email?: string; 'api-key-id': string | null };
  target: { type: string; id: string; email?: string } | null;
  ip: string | null;
  'user-agent': string | null;
  details: Record<string, string | number | boolean | null>;
  'created-at': string;
}

export interface AuditPageState {
  orgId: string;
  status: 'loading' | 'ready' | 'forbidden' | 'missing' | 'failed';
  entries: AuditEntry[];
  nextCursor: string | null;
  loadingMore: boolean;
}

export interface AuditState {
  /** the audit log page's data, for the organization in the path */
  auditPage?: AuditPageState;
}

declare module '../shell/state.js' {
  interface AppState extends AuditState {}
}

/** entries per request */
export const AUDIT_PAGE_SIZE = 50;

/** `/orgs/<id>/audit-log` -> the id */
export function auditOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/audit-log\/?$/i.exec(path)?.[1];
}

export const auditPath = (orgId: string) => `/orgs/${orgId}/audit-log`;

export function registerAudit(core: EventCore<AppState>): void {
  core
    .regEvent('audit/open', ({ state }, [, orgId]) => ({
      db: { ...state, auditPage: { orgId: orgId as string, status: 'loading', entries: [], nextCursor: null, loadingMore: false } },
      'http/auth-api': {
        url: `orgs/${orgId}/audit-log`,
        queryParams: { limit: AUDIT_PAGE_SIZE },
        onSuccess: ['audit/loaded', orgId],
        onFailure: ['audit/failed', orgId],
      },
    }))
    .regEvent('audit/more', ({ state }) => {
      const page = state.auditPage;
      if (!page?.nextCursor || page.loadingMore) return;
      return {
        db: { ...state, auditPage: { ...page, loadingMore: true } },
        'http/auth-api': {
          url: `orgs/${page.orgId}/audit-log`,
          queryParams: { limit: AUDIT_PAGE_SIZE, cursor: page.nextCursor },
          onSuccess: ['audit/loaded', page.orgId],
          onFailure: ['audit/failed', page.orgId],
        },
      };
    })
    .regEvent('audit/loaded', ({ state }, [, orgId, body]) => {
      const page = state.auditPage;
      if (!page || page.orgId !== orgId) return;
      const b = body as { entries: AuditEntry[]; 'next-cursor': string | null };
      // a page arrives once per request: appended after what is shown, older entries below
      const seen = new Set(page.entries.map((e) => e.id));
      return {
        db: {
          ...state,
          auditPage: {
            ...page,
            status: 'ready',
            entries: [...page.entries, ...b.entries.filter((e) => !seen.has(e.id))],
            nextCursor: b['next-cursor'],
            loadingMore: false,
          },
        },
      };
    })
    .regEvent('audit/failed', ({ state }, [, orgId, failure]) => {
      const page = state.auditPage;
      if (!page || page.orgId !== orgId) return;
      // the error body (`{type, message}`), or the HttpFailure when no body came
      const type = (failure as { type?: string }).type;
      if (page.status === 'loading' && (type === 'forbidden' || type === 'not-found')) {
        return { db: { ...state, auditPage: { ...page, status: type === 'forbidden' ? 'forbidden' : 'missing' } } };
      }
      return {
        db: { ...state, auditPage: { ...page, status: page.status === 'loading' ? 'failed' : page.status, loadingMore: false } },
        dispatch: ['request/failed', failure],
      };
    });
}
