/**
 * The audit log's export (admins): `GET /api/orgs/<id>/audit-log/export?format=csv|ndjson` with
 * the page's filters. The API wants the bearer token, which a plain link would not carry, so the
 * export is fetched here with it, its streamed body gathered into a Blob (which the browser may
 * keep on disk), and offered as the file the answer's `Content-Disposition` names. A 401
 * refreshes the token once and asks again, as the request layer does; a refusal's message is
 * shown by the buttons.
 */
import type { EventCore } from '../core.js';
import type { BrowserIo } from '../shell/features.js';
import type { AppState } from '../shell/state.js';
import { auditApiUrl } from './events.js';
import { t } from '../i18n/words.js';

export interface AuditExportState {
  /** the export under way, or the one that failed (`error`), for the organization of the page */
  auditExport?: { orgId: string; error?: string };
}

declare module '../shell/state.js' {
  interface AppState extends AuditExportState {}
}

/** `attachment; filename="a.csv"` -> `a.csv` */
export const fileNameOf = (disposition: string | null) => /filename="?([^";]+)/i.exec(disposition ?? '')?.[1];

export function registerAuditExport(core: EventCore<AppState>, io: Pick<BrowserIo, 'download'>): void {
  /** the export's answer: the file offered, or why not (`audit/exported`); a 401 refreshes the token once */
  async function fetchExport({ orgId, format, url, retried }: { orgId: string; format: string; url: string; retried?: boolean }) {
    let error: string;
    try {
      // no Accept: a refusal comes as JSON
      const res = await fetch(url, { headers: { authorization: `Bearer ${core.state.token}` } });
      if (res.status === 401 && !retried) return core.dispatch(['audit/export-refresh', format]);
      if (res.ok) {
        const h = res.headers;
        io.download({ filename: fileNameOf(h.get('content-disposition')) ?? `audit-log.${format}`, type: h.get('content-type')!, text: await res.blob() });
        return core.dispatch(['audit/exported', orgId]);
      }
      error = ((await res.json().catch(() => ({}))) as { message?: string }).message ?? `HTTP ${res.status}`;
    } catch (err) {
      error = (err as Error).message;
    }
    core.dispatch(['audit/exported', orgId, error]);
  }
  core.regFx('audit/fetch-export', (spec: Parameters<typeof fetchExport>[0]) => {
    void fetchExport(spec);
  });

  core
    // `retried`: again with a refreshed token; one export at a time
    .regEvent('audit/export', ({ state }, [, format, retried]) => {
      const page = state.auditPage;
      if (!page || (state.auditExport && !state.auditExport.error && !retried)) return;
      return {
        db: { ...state, auditExport: { orgId: page.orgId } },
        'audit/fetch-export': {
          orgId: page.orgId,
          format,
          url: `/api/${auditApiUrl(page.orgId, `format=${format}${page.query && `&${page.query}`}`, '/export')}`,
          retried,
        },
      };
    })
    .regEvent('audit/export-refresh', (_ctx, [, format]) => ({
      'http/refresh-token': { onSuccess: ['audit/export', format, true], onFailure: ['router/navigate', { route: 'log-in' }] },
    }))
    // `error`: why it failed
    .regEvent('audit/exported', ({ state }, [, orgId, error]) => ({
      db: { ...state, auditExport: error ? { orgId: orgId as string, error: error as string } : undefined },
      dispatch: error ? undefined : ['toast/info', { message: t('Export downloaded') }],
    }));
}
