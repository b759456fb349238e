/**
 * A resource's `file` and `image` fields on its page (docs/files.md): in the form, a labelled file
 * input that uploads the chosen file at once (uploads.ts) with its progress, the file the field
 * holds, Remove for an optional one, and the server's refusal beside it; in the table, the file's
 * name as a link (an image's thumbnail before it). The links are signed when the item was answered
 * and valid 5 minutes; the list's next load signs new ones.
 */
import { Button } from '../ui/button.js';
import { useApp } from '../ui/app.js';
import type { FieldSpec, FieldValue, FileValue } from '../../shared/resource-fields.js';
import type { FieldUpload } from './uploads.js';
import { t } from '../i18n/words.js';

const IMAGE_TYPES = 'image/png,image/jpeg,image/webp';

/** `1536` -> `1.5 KB` */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const isFile = (value: FieldValue | undefined): value is FileValue => typeof value === 'object' && value !== null;

/** A stored file as a link to it, an image's 64 px rendition before its name. */
export function FileLink({ file }: { file: FileValue }) {
  return (
    <span class="inline-flex items-center gap-2">
      {file.renditions && <img src={file.renditions['64']} alt="" width={32} height={32} class="h-8 w-8 rounded object-cover" />}
      <a href={file.url} target="_blank" rel="noopener noreferrer" data-file={file.id}>
        {file.name}
      </a>
    </span>
  );
}

/** The file a field holds in the form: the upload's, or the item's. */
function heldFile(upload: FieldUpload | undefined, value: FieldValue | undefined): FileValue | undefined {
  if (!upload) return isFile(value) ? value : undefined;
  if (upload.status === 'sending') return heldFile(upload.previous, value);
  return upload.status === 'done' ? upload.file : undefined;
}

/** A file field's control in a resource's form; its value (the held file's id) is the hidden input named `name`. */
export function FileInput({
  plural,
  form,
  name,
  label,
  spec,
  value,
}: {
  plural: string;
  form: string;
  name: string;
  label: string;
  spec: FieldSpec;
  value: FieldValue | undefined;
}) {
  const { state, dispatch } = useApp();
  const id = `${form}-${name}`;
  const upload = state.resourcePages?.[plural]?.uploads?.[name];
  const error = state.fieldErrors?.[form]?.[name];
  const held = heldFile(upload, value);
  const sending = upload?.status === 'sending' ? upload : undefined;
  return (
    <div>
      <label class="block text-sm font-medium" for={id}>
        {label}
      </label>
      <input
        id={id}
        type="file"
        accept={spec.type === 'image' ? IMAGE_TYPES : undefined}
        class="mt-1 block w-full rounded-lg border border-line bg-surface px-3 py-2 text-sm aria-[invalid=true]:border-danger"
        aria-invalid={error ? true : undefined}
        aria-describedby={[`${id}-status`, error && `${id}-error`].filter(Boolean).join(' ')}
        onChange={(e) => {
          const chosen = e.currentTarget.files?.[0];
          if (chosen) dispatch([`${plural}/upload`, name, chosen]);
        }}
      />
      <input type="hidden" name={name} value={held?.id ?? ''} />
      <div class="mt-1 flex flex-wrap items-center gap-3 text-sm">
        {sending && <progress max={sending.total || 1} value={sending.sent} aria-label={t('Uploading {name}', { name: sending.name ?? '' })} class="w-40" />}
        <span id={`${id}-status`} aria-live="polite" data-upload-status={upload?.status ?? 'none'}>
          {sending ? t('Uploading {name}…', { name: sending.name ?? '' }) : held ? <FileLink file={held} /> : t('No file')}
          {!sending && held && <span class="text-muted"> ({sizeText(held.size)})</span>}
        </span>
        {spec.optional && held && !sending && (
          <Button
            variant="secondary"
            class="remove-file"
            aria-label={t('Remove the {label}', { label: label.toLowerCase() })}
            onClick={() => dispatch([`${plural}/upload-remove`, name])}
          >
            {t('Remove')}
          </Button>
        )}
      </div>
      {error && (
        <small class="mt-1 block text-sm text-danger" id={`${id}-error`} data-error-for={name}>
          {error}
        </small>
      )}
    </div>
  );
}

/** A file field's table cell: the file as a link, or a dash. */
export function FileCell({ value }: { value: FieldValue }) {
  return isFile(value) ? <FileLink file={value} /> : <>—</>;
}
