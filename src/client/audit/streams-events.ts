/**
 * An organization's audit log streams in the client (admins): the list with each stream's status
 * and lag, a form to add one of each kind (https, Splunk, Datadog, S3), a test sent now whose
 * outcome shows on the stream, pause, resume and delete. An https stream's signing secret comes
 * once, in the creation's answer: it stays in the state until it is dismissed, the page is left
 * or the account logs out. A field the server refuses has its message beside the field.
 */
import type { EventCore } from '../core.js';
import { errorsByField, type FailureBody, withFormErrors } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { msg, t } from '../i18n/words.js';

export type StreamKind = 'https' | 'splunk' | 'datadog' | 's3';

export interface AuditStream {
  id: string;
  kind: StreamKind;
  status: 'active' | 'paused';
  'paused-reason': 'manual' | 'failing' | null;
  url?: string;
  site?: string;
  bucket?: string;
  region?: string;
  endpoint?: string;
  'force-path-style'?: boolean;
  prefix?: string;
  'created-at': string;
  'last-delivered-at': string | null;
  /** entries waiting */
  lag: number;
  'last-error': string | null;
  'failing-since': string | null;
}

export interface StreamTest {
  delivered: boolean;
  'status-code': number | null;
  error: string | null;
  'duration-ms': number;
}

export interface AuditStreamsState {
  auditStreams?: {
    orgId: string;
    status: 'loading' | 'ready' | 'forbidden' | 'missing' | 'failed';
    streams?: AuditStream[];
    /** success count of the create form (keys it, so a success clears it) */
    formResets: number;
    /** the new https stream's signing secret, shown this once */
    secret?: { id: string; value: string };
    /** tests by stream id: under way (null) or their outcome */
    tests: Record<string, StreamTest | null>;
  };
}

declare module '../shell/state.js' {
  interface AppState extends AuditStreamsState {}
}

/** The create form's id: its field errors are the shell's `fieldErrors['create-stream']`. */
export const STREAM_FORM = 'create-stream';

/** `/orgs/<id>/audit-log/streams` -> the id */
export const streamsOrgIdOf = (path: string) => /^\/orgs\/([0-9a-f-]{36})\/audit-log\/streams\/?$/i.exec(path)?.[1];

export const streamsPath = (orgId: string) => `/orgs/${orgId}/audit-log/streams`;

type Page = NonNullable<AuditStreamsState['auditStreams']>;

const pageOf = (state: AppState, orgId: unknown): Page | undefined => (state.auditStreams?.orgId === orgId ? state.auditStreams : undefined);
const withPage = (state: AppState, page: Page, extra: Partial<AppState> = {}): AppState => ({ ...state, ...extra, auditStreams: page });

/** What test, pause, resume and delete send, and say when done (a test: its outcome, on the stream). */
const ACTS: Record<string, [method: 'post' | 'delete', path: string, done?: string]> = {
  test: ['post', '/test'],
  pause: ['post', '/pause', msg('Stream paused')],
  resume: ['post', '/resume', msg('Stream resumed')],
  delete: ['delete', '', msg('Stream deleted')],
};

export function registerAuditStreams(core: EventCore<AppState>): void {
  core
    // every entry starts afresh: a secret shown before is gone
    .regEvent('streams/open', ({ state }, [, orgId]) => ({
      db: withFormErrors(withPage(state, { orgId: orgId as string, status: 'loading', formResets: 0, tests: {} }), STREAM_FORM, undefined),
      dispatch: ['streams/load', orgId],
    }))
    .regEvent('streams/load', (_ctx, [, orgId]) => ({
      'http/auth-api': {
        url: `orgs/${orgId}/audit-log/streams`,
        successPath: ['streams'],
        onSuccess: ['streams/loaded', orgId],
        onFailure: ['streams/failed', orgId],
      },
    }))
    .regEvent('streams/loaded', ({ state }, [, orgId, streams]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return { db: withPage(state, { ...page, status: 'ready', streams: streams as AuditStream[] }, { busy: false }) };
    })
    // the first load tells a member (403) and a non-member (404) what the page is; a refused field
    // is shown beside it; anything else is a toast
    .regEvent('streams/failed', ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      const f = failure as FailureBody;
      const idle = { ...state, busy: false };
      if (page?.status === 'loading') {
        const status = f.type === 'forbidden' ? 'forbidden' : f.type === 'not-found' ? 'missing' : 'failed';
        return { db: withPage(idle, { ...page, status }), dispatch: status === 'failed' ? ['request/failed', failure] : undefined };
      }
      if (page && f.type === 'request-coercion' && f.errors?.length) return { db: withFormErrors(idle, STREAM_FORM, errorsByField(f.errors)) };
      return { db: idle, dispatch: ['request/failed', failure] };
    })
    // `fields`: the form's non-empty fields (a ticked box is `on`), with `kind`
    .regEvent('streams/create', ({ state }, [, fields]) => {
      const page = state.auditStreams;
      if (!page) return;
      const body: Record<string, unknown> = { ...(fields as Record<string, string>) };
      if (body['force-path-style']) body['force-path-style'] = true;
      return {
        db: { ...withFormErrors(state, STREAM_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/audit-log/streams`,
          method: 'post',
          body,
          onSuccess: ['streams/created', page.orgId],
          onFailure: ['streams/failed', page.orgId],
        },
      };
    })
    .regEvent('streams/created', ({ state }, [, orgId, created]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      const c = created as AuditStream & { secret?: string };
      return {
        db: withPage(state, { ...page, secret: c.secret ? { id: c.id, value: c.secret } : undefined, formResets: page.formResets + 1 }),
        dispatchN: [
          ['toast/info', { message: t('Stream added') }],
          ['streams/load', orgId],
        ],
      };
    })
    .regEvent('streams/copy-secret', ({ state }) => {
      const secret = state.auditStreams?.secret;
      if (!secret) return;
      return {
        'clipboard/copy': {
          text: secret.value,
          onSuccess: ['toast/info', { message: t('Secret copied') }],
          onFailure: ['toast/error', { message: t('Copying failed: select it and copy it yourself') }],
        },
      };
    })
    .regEvent('streams/hide-secret', ({ state }) => {
      const page = state.auditStreams;
      if (!page) return;
      return { db: withPage(state, { ...page, secret: undefined }) };
    })
    // test, pause, resume, delete (the view asks before a deletion); a test is answered once the destination answered (seconds, at most)
    .regEvent('streams/act', ({ state }, [, streamId, act]) => {
      const page = state.auditStreams;
      if (!page) return;
      const [method, path, done] = ACTS[act as string];
      const { orgId, tests } = page;
      return {
        db: done ? { ...state, busy: true } : withPage(state, { ...page, tests: { ...tests, [streamId as string]: null } }),
        'http/auth-api': {
          url: `orgs/${orgId}/audit-log/streams/${streamId}${path}`,
          method,
          onSuccessN: done
            ? [
                ['toast/info', { message: t(done) }],
                ['streams/load', orgId],
              ]
            : [['streams/tested', orgId, streamId]],
          onFailure: done ? ['streams/failed', orgId] : ['streams/tested', orgId, streamId],
        },
      };
    })
    // the test's outcome, or the refusal of its request (a toast says why)
    .regEvent('streams/tested', ({ state }, [, orgId, streamId, result]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const { [streamId as string]: _done, ...tests } = page.tests;
      const outcome = result as StreamTest;
      const ok = 'delivered' in outcome;
      return {
        db: withPage(state, { ...page, tests: ok ? { ...tests, [streamId as string]: outcome } : tests }),
        dispatch: ok ? undefined : ['request/failed', result],
      };
    });
}
