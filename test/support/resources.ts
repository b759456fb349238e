/**
 * Test support for the resources `npm run new:resource` makes (docs/resources.md): valid inputs
 * of every field type (a file field's: an upload made for it), what the API answers for them, and
 * a wrong value for each field.
 */
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { isFileType, type FieldSpec, type FieldSpecs, type FieldValue, type FileValue } from '../../src/shared/resource-fields.js';
import type { TestAccount } from '../orgs/support.js';
import type { TestSystem } from './system.js';
import { uploadAndComplete } from './uploads.js';

/** A valid value of a field that is not a file field (a file field's is an upload: {@link inputWithFiles}); `n` makes values of different items differ. */
export function validValue(spec: FieldSpec, n: number): FieldValue {
  switch (spec.type) {
    case 'file':
    case 'image':
      throw new Error("a file field's value is an upload's id: inputWithFiles");
    case 'string':
      return `Item ${n}`;
    case 'text':
      return `Notes on item ${n}\nwith a second line`;
    case 'integer':
      return n;
    case 'decimal':
      return `${1000 + n}.50`;
    case 'boolean':
      return n % 2 === 0;
    case 'date':
      return `2026-02-${String((n % 28) + 1).padStart(2, '0')}`;
    case 'datetime':
      return `2026-03-01T09:${String(n % 60).padStart(2, '0')}:00+02:00`;
    case 'enum':
      return spec.values![n % spec.values!.length];
  }
}

/** A create body with every field (optional ones too) but the file fields, which need uploads ({@link inputWithFiles}). */
export function validInput(fields: FieldSpecs, n: number): Record<string, FieldValue> {
  return Object.fromEntries(Object.entries(fields).flatMap(([name, spec]) => (isFileType(spec.type) ? [] : [[name, validValue(spec, n)]])));
}

/** The bytes of item `n`'s file for a field: a PNG for an image, a line of text otherwise. */
export async function fileBytes(spec: FieldSpec, field: string, n: number): Promise<{ name: string; type: string; body: Buffer }> {
  if (spec.type !== 'image') return { name: `${field}-${n}.txt`, type: 'text/plain', body: Buffer.from(`The ${field} of item ${n}\n`) };
  const body = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: (n * 40) % 256, g: 90, b: 200 } } })
    .png()
    .toBuffer();
  return { name: `${field}-${n}.png`, type: 'image/png', body };
}

/** The uploads made here, by id: what the API answers for them, and their bytes. */
const UPLOADED = new Map<string, { file: Omit<FileValue, 'url' | 'renditions'>; body: Buffer }>();

/** An upload made by {@link uploadFor}: the stored file (no links) and its bytes. */
export const uploaded = (id: string) => UPLOADED.get(id);

/** Uploads item `n`'s file for `field` (purpose `<plural>.<field>`) of the organization, as `who`: the completed file's id. */
export async function uploadFor(
  t: TestSystem,
  who: TestAccount,
  organizationId: string,
  plural: string,
  field: string,
  spec: FieldSpec,
  n: number,
): Promise<string> {
  const { name, type, body } = await fileBytes(spec, field, n);
  const { completed } = await uploadAndComplete(t, who, { purpose: `${plural}.${field}`, name, 'content-type': type, 'organization-id': organizationId }, body);
  assert.equal(completed.status, 201, completed.text);
  const id = completed.body.id as string;
  UPLOADED.set(id, { file: { id, name, 'content-type': type, size: body.length }, body });
  return id;
}

/** A create body with every field: {@link validInput}'s, and a new upload for each file field, made by `who` (the write role or above). */
export async function inputWithFiles(
  t: TestSystem,
  who: TestAccount,
  organizationId: string,
  plural: string,
  fields: FieldSpecs,
  n: number,
): Promise<Record<string, FieldValue>> {
  const input = validInput(fields, n);
  for (const [name, spec] of Object.entries(fields)) {
    if (isFileType(spec.type)) input[name] = await uploadFor(t, who, organizationId, plural, name, spec, n);
  }
  return input;
}

/** What the API answers for a value sent: a date-time in UTC, a file as the file uploaded (its links aside: {@link withoutLinks}), everything else as sent. */
export function answered(spec: FieldSpec, value: FieldValue | undefined): unknown {
  if (value === undefined || value === null) return null;
  if (isFileType(spec.type)) return UPLOADED.get(value as string)?.file ?? { id: value };
  return spec.type === 'datetime' ? new Date(value as string).toISOString() : value;
}

/** An item (or a field's value) without its files' links, which are signed when answered and so differ between answers. */
export function withoutLinks<T>(value: T): T {
  const strip = (v: unknown) => {
    if (typeof v !== 'object' || v === null || !('url' in v)) return v;
    const { url: _, renditions: __, ...file } = v as FileValue;
    return file;
  };
  if (typeof value !== 'object' || value === null) return value;
  if ('url' in value) return strip(value) as T;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, strip(v)])) as T;
}

/** The item's fields as the API answers them for `input`. */
export function answeredFields(fields: FieldSpecs, input: Record<string, FieldValue>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, answered(spec, input[name])]));
}

/** A value each field refuses: the wrong type, or the right type out of its range or calendar. */
export function badValue(spec: FieldSpec): unknown {
  switch (spec.type) {
    case 'string':
      return 'x'.repeat(256);
    case 'text':
      return 42;
    case 'integer':
      return 2 ** 31;
    case 'decimal':
      return 'twelve';
    case 'boolean':
      return 'yes';
    case 'date':
      return '2025-02-30';
    case 'datetime':
      return '2026-03-01T09:30:00';
    case 'enum':
      return 'not-one-of-them';
    case 'file':
    case 'image':
      return 'not-a-file-id';
  }
}
