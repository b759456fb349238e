/** The sample item as the client shows it (docs/sample-items.md): the fields, as src/sample-items/fields.ts has them, and who writes. */
import type { FieldSpecs } from '../../shared/resource-fields.js';
import type { ResourceConfig } from '../resources/events.js';

export const SAMPLE_ITEM_FIELDS = {
  name: { type: 'string' },
} as const satisfies FieldSpecs;

export const SAMPLE_ITEMS: ResourceConfig = {
  name: 'sample-item',
  plural: 'sample-items',
  title: { one: 'Sample item', many: 'Sample items' },
  fields: SAMPLE_ITEM_FIELDS,
  writeRole: 'admin',
};
