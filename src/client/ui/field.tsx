/**
 * Forms: a form keyed by its success count (a success clears it), labelled fields whose error
 * (the server's or a client check's) sits below them, tied by aria-describedby, and selects.
 * Inputs are uncontrolled, so typed text survives re-renders.
 */
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { t } from '../i18n/words.js';
import { formFields, useApp } from './app.js';

/**
 * A form that hands its fields to `onSubmit` (and its FormData, for a field with several values:
 * a {@link CheckboxGroup}). `resetKey`: the success count keying it (default: `formResets[id]`).
 */
export function Form({
  id,
  onSubmit,
  children,
  resetKey,
}: {
  id: string;
  onSubmit: (fields: Record<string, string>, data: FormData) => void;
  children: ComponentChildren;
  resetKey?: number;
}) {
  const { state } = useApp();
  const key = resetKey ?? state.formResets?.[id] ?? 0;
  return (
    <form
      key={key}
      id={id}
      class="space-y-4"
      aria-busy={state.busy}
      noValidate={false}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(formFields(e.currentTarget), new FormData(e.currentTarget));
      }}
    >
      {children}
    </form>
  );
}

const INPUT = 'mt-1 block w-full rounded-lg border border-line bg-surface px-3 py-2 text-sm placeholder:text-muted aria-[invalid=true]:border-danger';
export const LABEL = 'block text-sm font-medium';

/** What describes a field to assistive technology: its hint and its error, when it has them. */
export const describedByOf = (id: string, hint: string | undefined, error: string | undefined) =>
  [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;

/** A field's hint below its label, named by the field's aria-describedby. */
export function FieldHint({ id, hint }: { id: string; hint: string | undefined }) {
  return hint ? (
    <small id={`${id}-hint`} class="mt-1 block text-sm text-muted">
      {hint}
    </small>
  ) : null;
}

/** The input attributes the forms use. */
interface InputProps {
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'date' | 'datetime-local';
  /** a number input's granularity (`1`, `any`) */
  step?: string;
  required?: boolean;
  autoComplete?: string;
  minLength?: number;
  maxLength?: number;
  defaultValue?: string;
  spellcheck?: boolean;
  placeholder?: string;
  readOnly?: boolean;
}

function FieldError({ id, name, error }: { id: string; name: string; error?: string }) {
  return error ? (
    <small class="mt-1 block text-sm text-danger" id={`${id}-error`} data-error-for={name}>
      {error}
    </small>
  ) : null;
}

/** A labelled input (`#<form>-<name>`, or `id`), its hint and its error tied to it by aria-describedby. */
export function Field({
  form,
  name,
  label,
  id: given,
  hint,
  ...input
}: { form: string; name: string; label: string; id?: string; hint?: string } & InputProps) {
  const { state } = useApp();
  const id = given ?? `${form}-${name}`;
  const error = state.fieldErrors?.[form]?.[name];
  const describedBy = describedByOf(id, hint, error);
  // Preact types inputs as a union by `type`; a `type` chosen at run time needs the plain attribute map
  const attrs = {
    id,
    name,
    type: 'text',
    // an address or a URL reads left to right in every language (its field too, in Arabic)
    ...(input.type === 'email' || input.type === 'url' ? { dir: 'ltr' } : {}),
    ...input,
    class: INPUT,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div>
      <label class={LABEL} for={id}>
        {label}
      </label>
      <input {...attrs} />
      <FieldHint id={id} hint={hint} />
      <FieldError id={id} name={name} error={error} />
    </div>
  );
}

/** A labelled multi-line text input (pasted XML, say), its hint and error tied to it like a {@link Field}'s. */
export function TextAreaField({
  form,
  name,
  label,
  id: given,
  hint,
  required,
  rows = 6,
  maxLength,
  defaultValue,
  mono = true,
}: {
  form: string;
  name: string;
  label: string;
  id?: string;
  hint?: string;
  required?: boolean;
  rows?: number;
  maxLength?: number;
  defaultValue?: string;
  /** monospaced, for pasted code (the default); prose: false */
  mono?: boolean;
}) {
  const { state } = useApp();
  const id = given ?? `${form}-${name}`;
  const error = state.fieldErrors?.[form]?.[name];
  const describedBy = describedByOf(id, hint, error);
  return (
    <div>
      <label class={LABEL} for={id}>
        {label}
      </label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        required={required}
        maxLength={maxLength}
        defaultValue={defaultValue}
        spellcheck={!mono}
        class={mono ? `${INPUT} font-mono` : INPUT}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
      />
      <FieldHint id={id} hint={hint} />
      <FieldError id={id} name={name} error={error} />
    </div>
  );
}

/** A labelled select; `onChange` for one that acts at once, none for one read with its form. */
export function SelectField({
  id,
  name,
  label,
  options,
  value,
  defaultValue,
  disabled,
  onChange,
  srOnlyLabel,
  form,
}: {
  id: string;
  name?: string;
  label: string;
  options: Array<{ value: string; label: string }>;
  value?: string;
  /** the first choice of a select read with its form */
  defaultValue?: string;
  disabled?: boolean;
  onChange?: (value: string) => void;
  srOnlyLabel?: boolean;
  form?: string;
}) {
  const { state } = useApp();
  const error = form && name ? state.fieldErrors?.[form]?.[name] : undefined;
  return (
    <div>
      <label class={srOnlyLabel ? 'sr-only' : LABEL} for={id}>
        {label}
      </label>
      <select
        id={id}
        name={name}
        value={value}
        disabled={disabled}
        class={`${INPUT} ${srOnlyLabel ? 'mt-0' : ''} pe-8`}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={onChange && ((e) => onChange(e.currentTarget.value))}
      >
        {/* a select has no default value of its own: the option says it is the chosen one */}
        {options.map((o) => (
          <option key={o.value} value={o.value} selected={value === undefined && defaultValue !== undefined ? o.value === defaultValue : undefined}>
            {t(o.label)}
          </option>
        ))}
      </select>
      {name && <FieldError id={id} name={name} error={error} />}
    </div>
  );
}

/** One labelled checkbox (`on` in the form's fields when checked), its error tied to it like a {@link Field}'s. */
export function CheckboxField({ form, name, label, defaultChecked }: { form: string; name: string; label: string; defaultChecked?: boolean }) {
  const { state } = useApp();
  const id = `${form}-${name}`;
  const error = state.fieldErrors?.[form]?.[name];
  return (
    <div>
      <label for={id} class="flex items-center gap-2 text-sm font-medium">
        <input
          id={id}
          type="checkbox"
          name={name}
          defaultChecked={defaultChecked}
          class="h-4 w-4 shrink-0 accent-primary"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
        />
        {label}
      </label>
      <FieldError id={id} name={name} error={error} />
    </div>
  );
}

/**
 * A group of checkboxes (a fieldset named by its legend), every checked value under `name` in the
 * form's FormData; the group's hint and error are tied to it by aria-describedby.
 */
export function CheckboxGroup({
  form,
  name,
  legend,
  id: given,
  hint,
  options,
}: {
  form: string;
  name: string;
  legend: string;
  id?: string;
  hint?: string;
  /** `label`: in the reader's words already (the callers say it); `checked`: ticked at first (a form showing what was chosen before) */
  options: Array<{ value: string; label: ComponentChildren; checked?: boolean }>;
}) {
  const { state } = useApp();
  const id = given ?? `${form}-${name}`;
  const error = state.fieldErrors?.[form]?.[name];
  const describedBy = describedByOf(id, hint, error);
  return (
    <fieldset id={id} aria-describedby={describedBy}>
      <legend class={LABEL}>{legend}</legend>
      <FieldHint id={id} hint={hint} />
      <div class="mt-2 space-y-2">
        {options.map((o, i) => (
          <label key={o.value} for={`${id}-${i}`} class="flex items-start gap-2 text-sm">
            <input id={`${id}-${i}`} type="checkbox" name={name} value={o.value} defaultChecked={o.checked} class="mt-0.5 h-4 w-4 shrink-0 accent-primary" />
            <span class="min-w-0 break-words">{o.label}</span>
          </label>
        ))}
      </div>
      <FieldError id={id} name={name} error={error} />
    </fieldset>
  );
}

/** A read-only value to copy (a new API key), with its label for assistive technology. */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <input id={id} readOnly value={value} aria-label={label} spellcheck={false} class={`${INPUT} mt-0 font-mono`} onFocus={(e) => e.currentTarget.select()} />
  );
}
