/** The sample item as the client shows it (docs/sample-items.md): the fields, as src/sample-items/fields.ts has them, and who writes. */
import type { FieldSpecs } from '../../shared/resource-fields.js';
import { msg } from '../i18n/words.js';
import type { ResourceConfig } from '../resources/events.js';

export const SAMPLE_ITEM_FIELDS = {
  name: { type: 'string' },
} as const satisfies FieldSpecs;

/** the OAuth scopes the module declares, in the consent screen's words (as src/sample-items/module.ts has them) */
export const SAMPLE_ITEM_SCOPES: Readonly<Record<string, string>> = {
  'sample-items:read': msg("See your organizations' sample items"),
  'sample-items:write': msg("Create, change and delete your organizations' sample items"),
};

export const SAMPLE_ITEMS: ResourceConfig = {
  name: 'sample-item',
  plural: 'sample-items',
  title: { one: msg('Sample item'), many: msg('Sample items') },
  fields: SAMPLE_ITEM_FIELDS,
  // the pages' words for the fields (and enum values, `<field>.<value>`): src/client/sample-items/messages/ translates them
  labels: {
    name: msg('Name'),
  },
  writeRole: 'admin',
};
