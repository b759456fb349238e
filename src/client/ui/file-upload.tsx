/**
 * An upload control: a labelled file input (the browser's own, so the keyboard and assistive
 * technology know it), the upload's progress and state, and a refusal beside it (the type, the
 * size, the bytes, the plan's room: the server's words). Choosing a file starts the upload at
 * once (`upload/choose`, shell/uploads.ts); the state is `uploads[id]`.
 */
import type { UploadRequest } from '../shell/uploads.js';
import { useApp } from './app.js';
import { Alert } from './feedback.js';
import { describedByOf, FieldHint, LABEL } from './field.js';
import { t } from '../i18n/words.js';

/** The types an image (an avatar, a logo) may be, for `accept` (docs/files.md); the server checks the bytes anyway. */
export const IMAGE_TYPES = 'image/png,image/jpeg,image/webp';

const FILE_INPUT =
  'mt-1 block w-full text-sm text-muted file:me-3 file:min-h-10 file:cursor-pointer file:rounded-lg file:border file:border-solid file:border-line file:bg-surface file:px-4 file:py-2 file:text-sm file:font-medium file:text-fg hover:file:bg-raised disabled:cursor-progress disabled:opacity-60';

const STATUS: Record<string, (name: string) => string> = {
  starting: (name) => t('Preparing {name}…', { name }),
  sending: (name) => t('Uploading {name}…', { name }),
  completing: (name) => t('Checking {name}…', { name }),
  done: (name) => t('{name} is uploaded.', { name }),
};

export function FileUpload({
  id,
  label,
  accept,
  hint,
  request,
  disabled,
}: {
  /** the input's id, and the upload's key in `uploads` */
  id: string;
  label: string;
  /** the types the picker offers (`image/png,image/jpeg,image/webp`); the server decides anyway */
  accept: string;
  hint?: string;
  request: UploadRequest;
  disabled?: boolean;
}) {
  const { state, dispatch } = useApp();
  const upload = state.uploads?.[id];
  const going = upload?.phase === 'starting' || upload?.phase === 'sending' || upload?.phase === 'completing';
  const error = upload?.phase === 'failed' ? upload.message : undefined;
  const shown = upload && upload.phase !== 'failed';
  const percent = upload && upload.total > 0 ? Math.round((upload.loaded / upload.total) * 100) : 0;
  return (
    <div data-upload={id} data-phase={upload?.phase}>
      <label class={LABEL} for={id}>
        {label}
      </label>
      <input
        id={id}
        type="file"
        accept={accept}
        disabled={disabled || going}
        class={FILE_INPUT}
        aria-invalid={error ? true : undefined}
        aria-describedby={[describedByOf(id, hint, error), `${id}-status`].filter(Boolean).join(' ')}
        onChange={(e) => {
          const input = e.currentTarget;
          const file = input.files?.[0];
          // cleared, so choosing the same file again (after a refusal) starts again
          input.value = '';
          if (file) dispatch(['upload/choose', id, file, request]);
        }}
      />
      <FieldHint id={id} hint={hint} />
      {shown && (
        <div class="mt-2 flex items-center gap-3">
          <progress
            id={`${id}-progress`}
            class="h-2 min-w-0 flex-1 appearance-none overflow-hidden rounded-full bg-raised [&::-moz-progress-bar]:bg-primary [&::-webkit-progress-bar]:bg-raised [&::-webkit-progress-value]:bg-primary"
            max={upload.total || 1}
            value={upload.loaded}
            aria-label={t('Upload of {name}', { name: upload.name })}
          />
          <span aria-hidden="true" class="w-10 text-end text-sm tabular-nums text-muted">
            {percent}%
          </span>
        </div>
      )}
      {/* always there, so a screen reader hears each new state; the percentage is the progress bar's */}
      <p id={`${id}-status`} role="status" data-phase={upload?.phase} class="mt-1 text-sm text-muted empty:hidden">
        {shown ? STATUS[upload.phase]?.(upload.name) : ''}
      </p>
      {error && (
        <div class="mt-2">
          <Alert tone="error" id={`${id}-error`}>
            {error}
          </Alert>
        </div>
      )}
    </div>
  );
}
