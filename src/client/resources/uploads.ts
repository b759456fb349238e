/**
 * A resource form's `file` and `image` fields (docs/files.md): choosing a file uploads it at once,
 * in the three steps of the files API: `POST /api/uploads` (purpose `<plural>.<field>`, the
 * organization's), the bytes straight to where it answers (the effect `resources/send-file`,
 * XMLHttpRequest for its upload progress: a form POST to S3, a PUT to the disk driver), then
 * `POST /api/uploads/:id/complete`. The completed file's id is the field's value when the form is
 * saved; a refusal lands beside the field. A later choice replaces an upload under way (its answers
 * are ignored), and a save waits for none: it is refused while a file is still being sent.
 */
import type { EventCore, EventVector } from '../core.js';
import type { FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import type { FileValue } from '../../shared/resource-fields.js';
import { t } from '../i18n/words.js';

/** A file field's upload in the form, by field: what the form saves instead of the item's file. */
export interface FieldUpload {
  /** this choice's number: the answers of an earlier one are ignored */
  attempt: number;
  /** `sending` (the three steps), `done` (`file` is the field's new value), `removed` (an optional field cleared) */
  status: 'sending' | 'done' | 'removed';
  /** the chosen file's name, bytes sent and its size */
  name?: string;
  sent: number;
  total: number;
  file?: FileValue;
  /** what the field held before this choice (a failed one goes back to it) */
  previous?: FieldUpload;
}

/** Where `POST /api/uploads` says the bytes go (docs/files.md). */
export interface UploadTarget {
  'upload-id': string;
  method: 'POST' | 'PUT';
  url: string;
  fields: Record<string, string>;
}

/** The value of the effect `resources/send-file`. */
export interface SendFile {
  target: UploadTarget;
  file: Blob;
  contentType: string;
  /** with the bytes sent so far */
  onProgress: EventVector;
  onSuccess: EventVector;
  /** with `{message}` */
  onFailure: EventVector;
}

/** A chosen file's type as the upload declares it (the browser's guess; unknown: bytes). */
export const declaredType = (file: { type: string }) => file.type.toLowerCase() || 'application/octet-stream';

/** Sends the bytes with XMLHttpRequest, whose upload events report progress (fetch has none). */
export function sendFile(send: SendFile, core: EventCore<AppState>): void {
  const xhr = new XMLHttpRequest();
  xhr.open(send.target.method, send.target.url);
  xhr.upload.addEventListener('progress', (e) => {
    if (e.lengthComputable) core.dispatch([...send.onProgress, e.loaded]);
  });
  xhr.addEventListener('load', () =>
    core.dispatch(
      xhr.status < 300 ? send.onSuccess : [...send.onFailure, { message: t('The file store refused the file (HTTP {status})', { status: xhr.status }) }],
    ),
  );
  xhr.addEventListener('error', () => core.dispatch([...send.onFailure, { message: t('The file could not be sent; check the connection and try again') }]));
  if (send.target.method === 'PUT') {
    xhr.setRequestHeader('content-type', send.contentType);
    xhr.send(send.file);
    return;
  }
  // S3's presigned POST: its policy's fields first, the file last
  const form = new FormData();
  for (const [name, value] of Object.entries(send.target.fields)) form.append(name, value);
  form.append('file', send.file);
  xhr.send(form);
}

/** A refused step's words for the field: the server's reason, or a bad part of the declaration. */
export function refusalOf(failure: unknown): string {
  const body = failure as FailureBody | undefined;
  const first = body?.type === 'request-coercion' ? body.errors?.[0] : undefined;
  if (first) return t("The file's {field} {reason}", { field: first.path.replace(/^\//, ''), reason: first.message });
  return body?.message ?? t('The file could not be uploaded');
}

/** What the upload events read and write of a resource's page state (events.ts). */
export interface UploadPage {
  orgId: string;
  editing?: { id: string | null };
  uploads?: Record<string, FieldUpload>;
}

interface UploadWiring<P extends UploadPage> {
  plural: string;
  /** the form's id: its field errors are `fieldErrors[form]` */
  form: string;
  page(state: AppState): P | undefined;
  withPage(state: AppState, page: P): AppState;
}

/** The state with one field's error of the form set (a message) or cleared (undefined). */
function withFieldError(state: AppState, form: string, field: string, message: string | undefined): AppState {
  const { [field]: _, ...others } = state.fieldErrors?.[form] ?? {};
  return { ...state, fieldErrors: { ...state.fieldErrors, [form]: message ? { ...others, [field]: message } : others } };
}

/** The events of a resource's uploads: `<plural>/upload` (a field, the chosen File), `<plural>/upload-remove` (a field), and their steps. */
export function registerUploads<P extends UploadPage>(core: EventCore<AppState>, wiring: UploadWiring<P>): void {
  const { plural, form } = wiring;
  /** the page and the field's upload, when `attempt` is still the field's latest */
  const current = (state: AppState, field: unknown, attempt: unknown) => {
    const page = wiring.page(state);
    const upload = page?.uploads?.[field as string];
    return page && upload && upload.attempt === attempt ? { page, upload } : undefined;
  };
  const withUpload = (state: AppState, page: P, field: string, upload: FieldUpload | undefined) => {
    const { [field]: _, ...others } = page.uploads ?? {};
    return wiring.withPage(state, { ...page, uploads: upload ? { ...others, [field]: upload } : others });
  };
  core.regFx('resources/send-file', sendFile);
  core
    .regEvent(`${plural}/upload`, ({ state }, [, field, chosen]) => {
      const page = wiring.page(state);
      if (!page?.editing) return;
      const file = chosen as File;
      const before = page.uploads?.[field as string];
      const previous = before?.status === 'sending' ? before.previous : before;
      const upload: FieldUpload = { attempt: (before?.attempt ?? 0) + 1, status: 'sending', name: file.name, sent: 0, total: file.size, previous };
      const { attempt } = upload;
      return {
        db: withFieldError(withUpload(state, page, field as string, upload), form, field as string, undefined),
        'http/auth-api': {
          url: 'uploads',
          method: 'post',
          body: { purpose: `${plural}.${field}`, name: file.name, 'content-type': declaredType(file), size: file.size, 'organization-id': page.orgId },
          onSuccess: [`${plural}/upload-target`, field, attempt, file],
          onFailure: [`${plural}/upload-failed`, field, attempt],
        },
      };
    })
    .regEvent(`${plural}/upload-target`, ({ state }, [, field, attempt, file, target]) => {
      if (!current(state, field, attempt)) return;
      const send: SendFile = {
        target: target as UploadTarget,
        file: file as File,
        contentType: declaredType(file as File),
        onProgress: [`${plural}/upload-progress`, field, attempt],
        onSuccess: [`${plural}/upload-sent`, field, attempt, (target as UploadTarget)['upload-id']],
        onFailure: [`${plural}/upload-failed`, field, attempt],
      };
      return { 'resources/send-file': send };
    })
    .regEvent(`${plural}/upload-progress`, ({ state }, [, field, attempt, sent]) => {
      const at = current(state, field, attempt);
      if (!at) return;
      return { db: withUpload(state, at.page, field as string, { ...at.upload, sent: sent as number }) };
    })
    .regEvent(`${plural}/upload-sent`, ({ state }, [, field, attempt, uploadId]) => {
      if (!current(state, field, attempt)) return;
      return {
        'http/auth-api': {
          url: `uploads/${uploadId}/complete`,
          method: 'post',
          body: {},
          onSuccess: [`${plural}/uploaded`, field, attempt],
          onFailure: [`${plural}/upload-failed`, field, attempt],
        },
      };
    })
    .regEvent(`${plural}/uploaded`, ({ state }, [, field, attempt, file]) => {
      const at = current(state, field, attempt);
      if (!at) return;
      const done: FieldUpload = {
        attempt: at.upload.attempt,
        status: 'done',
        name: at.upload.name,
        sent: at.upload.total,
        total: at.upload.total,
        file: file as FileValue,
      };
      return { db: withUpload(state, at.page, field as string, done) };
    })
    // the field keeps what it held before the choice; the refusal is beside it
    .regEvent(`${plural}/upload-failed`, ({ state }, [, field, attempt, failure]) => {
      const at = current(state, field, attempt);
      if (!at) return;
      const back = at.upload.previous && { ...at.upload.previous, attempt: at.upload.attempt };
      return { db: withFieldError(withUpload(state, at.page, field as string, back), form, field as string, refusalOf(failure)) };
    })
    .regEvent(`${plural}/upload-remove`, ({ state }, [, field]) => {
      const page = wiring.page(state);
      if (!page?.editing) return;
      const attempt = (page.uploads?.[field as string]?.attempt ?? 0) + 1;
      return { db: withUpload(state, page, field as string, { attempt, status: 'removed', sent: 0, total: 0 }) };
    });
}

/** The first field of `uploads` still sending, if any: a save waits for it. */
export const stillSending = (uploads: Record<string, FieldUpload> | undefined) =>
  Object.entries(uploads ?? {}).find(([, upload]) => upload.status === 'sending')?.[0];
