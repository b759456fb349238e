/**
 * Test support for the resources `npm run new:resource` makes (docs/resources.md): valid inputs
 * of every field type, what the API answers for them, and a wrong value for each field.
 */
import type { FieldSpec, FieldSpecs, FieldValue } from '../../src/shared/resource-fields.js';

/** A valid value of a field; `n` makes values of different items differ. */
export function validValue(spec: FieldSpec, n: number): FieldValue {
  switch (spec.type) {
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

/** A create body with every field (optional ones too). */
export function validInput(fields: FieldSpecs, n: number): Record<string, FieldValue> {
  return Object.fromEntries(Object.entries(fields).map(([name, spec]) => [name, validValue(spec, n)]));
}

/** What the API answers for a value sent: a date-time in UTC, everything else as sent. */
export function answered(spec: FieldSpec, value: FieldValue | undefined): FieldValue {
  if (value === undefined || value === null) return null;
  return spec.type === 'datetime' ? new Date(value as string).toISOString() : value;
}

/** The item's fields as the API answers them for `input`. */
export function answeredFields(fields: FieldSpecs, input: Record<string, FieldValue>): Record<string, FieldValue> {
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
  }
}
