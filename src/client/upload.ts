/**
 * The request layer's one upload effect, `upload/send`: a file's bytes sent where the server's
 * `POST /api/uploads` answer says (docs/files.md), never through the API itself. `PUT` sends the
 * body as it is (the disk driver's signed URL); `POST` sends a form of every `fields` entry, then
 * the file as `file` (S3's presigned POST, whose policy lists the fields in that order). Through
 * XMLHttpRequest, because fetch reports no upload progress. No token, cookie or CSRF token goes
 * with it: the URL is signed, and the bucket is another origin.
 */
import type { EventCore, EventVector } from './core.js';
import { t } from './i18n/words.js';

/** Where and how the bytes go: the server's answer to `POST /api/uploads`. */
export interface UploadTarget {
  method: 'POST' | 'PUT';
  url: string;
  fields: Record<string, string>;
}

/** The store's answer; `status` 0 when none came (the network, or the browser refused the request). */
export interface SentAnswer {
  status: number;
  text: string;
}

/** Sends `file` to `target`, reporting the bytes sent so far. */
export type UploadSender = (target: UploadTarget, file: Blob, onProgress: (loaded: number, total: number) => void) => Promise<SentAnswer>;

export interface UploadSendOptions {
  target: UploadTarget;
  file: Blob;
  /** dispatched with `loaded` and `total` each time another whole percent is sent */
  onProgress: EventVector;
  /** dispatched once the store took the bytes (2xx) */
  onSuccess: EventVector;
  /** dispatched with the {@link SentAnswer} otherwise */
  onFailure: EventVector;
}

/** The browser's sender. */
export const xhrSender: UploadSender = (target, file, onProgress) =>
  new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open(target.method, target.url);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total);
    });
    xhr.addEventListener('load', () => resolve({ status: xhr.status, text: xhr.responseText }));
    for (const end of ['error', 'abort', 'timeout'] as const) xhr.addEventListener(end, () => resolve({ status: 0, text: '' }));
    if (target.method === 'PUT') {
      xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
      xhr.send(file);
      return;
    }
    const form = new FormData();
    for (const [name, value] of Object.entries(target.fields)) form.append(name, value);
    form.append('file', file);
    xhr.send(form);
  });

/** Installs `upload/send` on a core; tests give a sender of their own. */
export function installUploads<S>(core: EventCore<S>, send: UploadSender = xhrSender): void {
  core.regFx('upload/send', (opts: UploadSendOptions) => {
    let percent = -1;
    void send(opts.target, opts.file, (loaded, total) => {
      // one event per whole percent: each one renders the page again
      const now = total > 0 ? Math.floor((loaded / total) * 100) : 0;
      if (now === percent) return;
      percent = now;
      core.dispatch([...opts.onProgress, loaded, total] as EventVector);
    }).then((answer) => core.dispatch(answer.status >= 200 && answer.status < 300 ? opts.onSuccess : ([...opts.onFailure, answer] as EventVector)));
  });
}

/** What a store's refusal says: the disk driver's JSON `message`, S3's XML `<Message>`, or its status. */
export function refusalOf(answer: SentAnswer): string {
  if (answer.status === 0) return t('The file could not be sent: the connection failed. Try again.');
  try {
    const message = (JSON.parse(answer.text) as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
  } catch {
    /* not JSON: S3 answers XML */
  }
  const xml = /<Message>([^<]{1,300})<\/Message>/.exec(answer.text)?.[1];
  return xml ? t('The store refused the file: {reason}', { reason: xml }) : t('The store refused the file (HTTP {status}).', { status: answer.status });
}
