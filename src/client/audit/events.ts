/**
 * An organization's audit log in the client: the first page when the page opens, older pages
 * with "load more" (the server's `next-cursor`), both with the filters of the page's query
 * string (filters.ts): the page opens again with the query a filter change navigates to, so a
 * reload, a shared link and Back show the same selection. A filter the server refuses (400
 * `request-coercion`) has its message beside its field. A member below admin is told so (403), a
 * non-member that the organization does not exist for it (404).
 */
import type { AppState } from '../shell/state.js';
import type { EventCore } from '../core.js';
import { errorsByField, type FailureBody, withFormErrors } from '../shell/form-errors.js';
import { filterQuery } from './filters.js';

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
  /** invalid: the server refused a filter (its message is beside the field) */
  status: 'loading' | 'ready' | 'forbidden' | 'missing' | 'failed' | 'invalid';
  /** the filters, as the query string of the page and the API (`action=…&from=…`; `''`: none) */
  query: string;
  /**
   * keys the filter form: the same after the form's own filters are applied (the focus stays on
   * its button), another for a query from elsewhere (Back, Clear, a link), which refills it
   */
  formKey: number;
  /** the query the form just applied, until the page opens with it */
  applied?: string;
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

/** The filter form's id: its field errors are the shell's `fieldErrors['audit-filters']`. */
export const FILTER_FORM = 'audit-filters';

/** The API's path of an organization's log (`/export` for the export) with the filters' query. */
export const auditApiUrl = (orgId: string, query: string, rest = '') => `orgs/${orgId}/audit-log${rest}${query ? `?${query}` : ''}`;

/** `/orgs/<id>/audit-log` -> the id */
export function auditOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/audit-log\/?$/i.exec(path)?.[1];
}

/** The log's page with the filters of `query` (a location's search, or none). */
export const auditPath = (orgId: string, query = '') => `/orgs/${orgId}/audit-log${query ? `?${query}` : ''}`;

export function registerAudit(core: EventCore<AppState>): void {
  core
    // `search`: the location's; the first page of what its filters select
    .regEvent('audit/open', ({ state }, [, orgId, search]) => {
      const query = filterQuery((search as string | undefined) ?? '');
      const prev = state.auditPage;
      const formKey = prev && prev.orgId === orgId && prev.applied === query ? prev.formKey : (prev?.formKey ?? 0) + 1;
      return {
        db: withFormErrors(
          {
            ...state,
            auditPage: { orgId: orgId as string, status: 'loading', query, formKey, entries: [], nextCursor: null, loadingMore: false },
            // an export's failure was about the filters before
            auditExport: state.auditExport?.error ? undefined : state.auditExport,
          },
          FILTER_FORM,
          undefined,
        ),
        'http/auth-api': {
          url: auditApiUrl(orgId as string, query),
          queryParams: { limit: AUDIT_PAGE_SIZE },
          onSuccess: ['audit/loaded', orgId, query],
          onFailure: ['audit/failed', orgId, query],
        },
      };
    })
    // filters applied (`fromForm`: by the form, else cleared): the page goes to their query (a
    // history entry) and opens with it there
    .regEvent('audit/filter', ({ state }, [, query, fromForm]) => {
      const page = state.auditPage;
      if (!page) return;
      const q = filterQuery(query as string);
      const db = { ...state, auditPage: { ...page, applied: fromForm ? q : undefined } };
      // the same filters again: the address stays, the first page comes afresh
      if (q === page.query) return { db, dispatch: ['audit/open', page.orgId, q] };
      return { db, dispatch: ['router/navigate', { route: 'org-audit', path: auditPath(page.orgId, q) }] };
    })
    .regEvent('audit/more', ({ state }) => {
      const page = state.auditPage;
      if (!page?.nextCursor || page.loadingMore) return;
      return {
        db: { ...state, auditPage: { ...page, loadingMore: true } },
        'http/auth-api': {
          url: auditApiUrl(page.orgId, page.query),
          queryParams: { limit: AUDIT_PAGE_SIZE, cursor: page.nextCursor },
          onSuccess: ['audit/loaded', page.orgId, page.query],
          onFailure: ['audit/failed', page.orgId, page.query],
        },
      };
    })
    .regEvent('audit/loaded', ({ state }, [, orgId, query, body]) => {
      const page = state.auditPage;
      // an answer for other filters than those shown now is dropped
      if (!page || page.orgId !== orgId || page.query !== query) return;
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
    .regEvent('audit/failed', ({ state }, [, orgId, query, failure]) => {
      const page = state.auditPage;
      if (!page || page.orgId !== orgId || page.query !== query) return;
      // the error body (`{type, message}`), or the HttpFailure when no body came
      const f = failure as FailureBody;
      const type = f.type;
      if (page.status === 'loading' && type === 'request-coercion' && f.errors?.length) {
        return { db: withFormErrors({ ...state, auditPage: { ...page, status: 'invalid', loadingMore: false } }, FILTER_FORM, errorsByField(f.errors)) };
      }
      if (page.status === 'loading' && (type === 'forbidden' || type === 'not-found')) {
        return { db: { ...state, auditPage: { ...page, status: type === 'forbidden' ? 'forbidden' : 'missing' } } };
      }
      return {
        db: { ...state, auditPage: { ...page, status: page.status === 'loading' ? 'failed' : page.status, loadingMore: false } },
        dispatch: ['request/failed', failure],
      };
    });
}
