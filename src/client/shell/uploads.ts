/**
 * A file's upload in three steps (docs/files.md), for any control (`ui/file-upload.tsx`) by its
 * id: `POST /api/uploads` asks where the bytes go; `upload/send` sends them there with progress
 * (upload.ts: the disk driver's signed PUT, or S3's presigned POST); `POST
 * /api/uploads/:id/complete` has the server check them. A refusal at any step (`file-rejected`,
 * `usage-limit`, the store's own) is kept in `uploads[control]` for the control to show beside
 * itself, not as a toast. Once complete, the request's `onDone` runs: what shows the file asks for
 * it again, since its signed links are new.
 */
import type { EventCore, EventVector } from '../core.js';
import type { HttpFailure } from '../http.js';
import { installUploads, refusalOf, type SentAnswer, type UploadSender, type UploadTarget } from '../upload.js';
import type { AppState, UploadState } from './state.js';
import { t } from '../i18n/words.js';

/** What a control uploads for. */
export interface UploadRequest {
  /** `avatar`, `organization-logo`, … (the server's purposes) */
  purpose: string;
  /** an organization's purpose: whose file it is */
  organizationId?: string;
  /** dispatched with the completed file */
  onDone: EventVector;
}

/** The control's upload in the state, changed by `change`; a control without one is left alone. */
function withUpload(state: AppState, control: string, change: Partial<UploadState>): AppState {
  const current = state.uploads?.[control];
  if (!current) return state;
  return { ...state, uploads: { ...state.uploads, [control]: { ...current, ...change } } };
}

const failed = (state: AppState, control: string, message: string) => ({ db: withUpload(state, control, { phase: 'failed', message }) });

/** What a refused API step says beside the control. */
export function uploadRefusal(failure: unknown): string {
  const f = (failure ?? {}) as Partial<HttpFailure> & { type?: string; message?: string };
  if (f.kind === 'network' || f.kind === 'timeout') return t('The upload could not reach the server. Try again.');
  // file-rejected (a type, a size, bytes that are not what they claim), usage-limit (the plan's room): the server's own words
  return f.message || t('The upload failed.');
}

/** A declared type the server's pattern takes (lower-case `type/subtype`); none: the server refuses it by name. */
const declaredType = (file: Blob) => (/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(file.type) ? file.type : 'application/octet-stream');

export function registerUploads(core: EventCore<AppState>, send?: UploadSender): void {
  installUploads(core, send);
  core
    .regEvent('upload/choose', ({ state }, [, control, file, request]) => {
      const id = control as string;
      const f = file as File;
      const r = request as UploadRequest;
      const db: AppState = { ...state, uploads: { ...state.uploads, [id]: { phase: 'starting', name: f.name, loaded: 0, total: f.size } } };
      if (f.size === 0) return failed(db, id, t('The file is empty.'));
      return {
        db,
        'http/auth-api': {
          url: 'uploads',
          method: 'post',
          body: {
            purpose: r.purpose,
            name: f.name.slice(0, 255) || 'file',
            'content-type': declaredType(f),
            size: f.size,
            ...(r.organizationId ? { 'organization-id': r.organizationId } : {}),
          },
          onSuccess: ['upload/started', id, f, r],
          onFailure: ['upload/failed', id],
        },
      };
    })
    .regEvent('upload/started', ({ state }, [, control, file, request, answer]) => {
      const id = control as string;
      const a = answer as UploadTarget & { 'upload-id': string };
      return {
        db: withUpload(state, id, { phase: 'sending' }),
        'upload/send': {
          target: { method: a.method, url: a.url, fields: a.fields ?? {} },
          file,
          onProgress: ['upload/progress', id],
          onSuccess: ['upload/sent', id, a['upload-id'], request],
          onFailure: ['upload/store-refused', id],
        },
      };
    })
    .regEvent('upload/progress', ({ state }, [, control, loaded, total]) => ({
      db: withUpload(state, control as string, { loaded: loaded as number, total: total as number }),
    }))
    .regEvent('upload/sent', ({ state }, [, control, uploadId, request]) => {
      const id = control as string;
      const upload = state.uploads?.[id];
      return {
        db: withUpload(state, id, { phase: 'completing', loaded: upload?.total ?? 0 }),
        'http/auth-api': {
          url: `uploads/${uploadId}/complete`,
          method: 'post',
          body: {},
          onSuccess: ['upload/completed', id, request],
          onFailure: ['upload/failed', id],
        },
      };
    })
    .regEvent('upload/completed', ({ state }, [, control, request, file]) => ({
      db: withUpload(state, control as string, { phase: 'done' }),
      dispatch: [...(request as UploadRequest).onDone, file] as EventVector,
    }))
    .regEvent('upload/failed', ({ state }, [, control, failure]) => failed(state, control as string, uploadRefusal(failure)))
    .regEvent('upload/store-refused', ({ state }, [, control, answer]) => failed(state, control as string, refusalOf(answer as SentAnswer)));
}

/** The uploads still under way: a finished one's outcome is not shown again on another page (the router's events). */
export function unfinishedUploads(uploads: AppState['uploads']): AppState['uploads'] {
  if (!uploads) return undefined;
  const going = Object.entries(uploads).filter(([, u]) => u.phase !== 'done' && u.phase !== 'failed');
  return going.length ? Object.fromEntries(going) : undefined;
}
