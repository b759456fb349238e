/**
 * Dialogs. Confirmation of a destructive action in a native `<dialog>` (modal: focus moves into it and
 * back to the button that opened it, Escape cancels). The button that opens it is part of it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { formFields } from './app.js';
import { Button, type Variant } from './button.js';
import { t } from '../i18n/words.js';

let dialogIds = 0;

export function ConfirmButton({
  children,
  title,
  message,
  confirmLabel,
  onConfirm,
  id,
  class: className,
  variant = 'danger',
  disabled,
}: {
  children: ComponentChildren;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  id?: string;
  class?: string;
  variant?: Variant;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = useRef(`confirm-${++dialogIds}`);
  return (
    <>
      <Button id={id} class={className} variant={variant} disabled={disabled} aria-haspopup="dialog" onClick={() => dialog.current?.showModal()}>
        {children}
      </Button>
      <dialog
        ref={dialog}
        aria-labelledby={`${ids.current}-title`}
        aria-describedby={`${ids.current}-message`}
        class="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl border border-line bg-surface p-6 text-fg shadow-xl backdrop:bg-black/50"
        onClose={() => {
          if (dialog.current?.returnValue === 'confirm') onConfirm();
        }}
      >
        <form method="dialog" class="space-y-4">
          <h2 id={`${ids.current}-title`} class="text-lg font-semibold">
            {title}
          </h2>
          <div id={`${ids.current}-message`} class="text-sm text-muted">
            {message}
          </div>
          <div class="flex flex-wrap justify-end gap-2">
            <Button type="submit" variant="secondary" class="confirm-cancel">
              {t('Cancel')}
            </Button>
            <button
              type="submit"
              value="confirm"
              class={`confirm-ok inline-flex min-h-10 items-center rounded-lg px-4 py-2 text-sm font-medium ${variant === 'danger' ? 'bg-danger text-danger-fg' : 'bg-primary text-primary-fg'}`}
            >
              {confirmLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/**
 * A modal that asks before an action goes on: open while it is rendered (focus moves into it,
 * Escape or Cancel calls `onCancel`); its form hands its fields to `onSubmit`.
 */
export function FormDialog({
  id,
  title,
  message,
  children,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  id: string;
  title: string;
  message: ComponentChildren;
  children?: ComponentChildren;
  submitLabel: string;
  onSubmit: (fields: Record<string, string>) => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const submitted = useRef(false);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={dialog}
      id={id}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-message`}
      class="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl border border-line bg-surface p-6 text-fg shadow-xl backdrop:bg-black/50"
      onClose={() => {
        if (!submitted.current) onCancel();
      }}
    >
      <form
        class="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submitted.current = true;
          const fields = formFields(e.currentTarget);
          dialog.current?.close();
          onSubmit(fields);
        }}
      >
        <h2 id={`${id}-title`} class="text-lg font-semibold">
          {title}
        </h2>
        <div id={`${id}-message`} class="text-sm text-muted">
          {message}
        </div>
        {children}
        <div class="flex flex-wrap justify-end gap-2">
          <Button variant="secondary" class="dialog-cancel" onClick={() => dialog.current?.close()}>
            {t('Cancel')}
          </Button>
          <Button type="submit" class="dialog-ok">
            {submitLabel}
          </Button>
        </div>
      </form>
    </dialog>
  );
}
