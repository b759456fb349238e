/**
 * The fields of a sample item, by their API names (docs/sample-items.md): the schemas, the table
 * and the client's forms follow from them. A field added later needs a migration of its own.
 */
import type { FieldSpecs } from '../shared/resource-fields.js';

export const SAMPLE_ITEM_FIELDS = {
  name: { type: 'string' },
} as const satisfies FieldSpecs;
