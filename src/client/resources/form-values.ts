/**
 * A resource form's text fields as the API's body (docs/resources.md): numbers as numbers, a
 * checkbox as a boolean, a `datetime-local` value with the browser's offset, a file field as its
 * file's id (uploads.ts), an empty optional field as `null` when editing (absent when creating). An edit sends only the fields whose input
 * differs from the text it started with ({@link inputTextOf}): a field left alone keeps what is
 * stored, even where its input cannot show it exactly (a date-time's seconds). What the server
 * refuses comes back as field errors; nothing is checked twice here.
 */
import type { FieldSpec, FieldSpecs, FieldValue } from '../../shared/resource-fields.js';

/** `2026-03-01T09:30` (the input's local time) -> `2026-03-01T09:30:00+01:00` */
export function withLocalOffset(local: string, at = new Date(local)): string {
  const minutes = -at.getTimezoneOffset();
  const sign = minutes >= 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${local.length === 16 ? `${local}:00` : local}${offset}`;
}

/** An ISO date-time -> the `datetime-local` input's value in the browser's time zone */
export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The text a field's input starts with for `value` (the form's text for it, `on` for a ticked checkbox); no value: the new item's. */
export function inputTextOf(spec: FieldSpec, value: FieldValue | undefined): string {
  if (spec.type === 'boolean') return value === true ? 'on' : '';
  if (value === null || value === undefined) return spec.type === 'enum' && !spec.optional ? (spec.values?.[0] ?? '') : '';
  if (typeof value === 'object') return value.id;
  return spec.type === 'datetime' ? toLocalInput(String(value)) : String(value);
}

function typedValue(spec: FieldSpec, text: string | undefined): FieldValue | undefined {
  if (spec.type === 'boolean') return text === 'on' || text === 'true';
  if (text === undefined || text === '') return spec.optional ? null : spec.type === 'string' || spec.type === 'text' ? '' : undefined;
  switch (spec.type) {
    case 'integer':
      return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    case 'datetime':
      return withLocalOffset(text);
    default:
      return text;
  }
}

/** The body of a create (`editing` false) or an update: of an update, only the fields changed from `before` (the item edited), when given. */
export function bodyOf(
  fields: FieldSpecs,
  form: Record<string, string>,
  editing: boolean,
  before?: Readonly<Record<string, FieldValue>>,
): Record<string, FieldValue> {
  const body: Record<string, FieldValue> = {};
  for (const [name, spec] of Object.entries(fields)) {
    if (editing && before && (form[name] ?? '') === inputTextOf(spec, before[name])) continue;
    const value = typedValue(spec, form[name]);
    if (value === undefined || (value === null && !editing)) continue;
    body[name] = value;
  }
  return body;
}
