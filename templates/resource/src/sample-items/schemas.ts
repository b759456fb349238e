/** Named schemas of the sample item routes (docs/sample-items.md): `sample-item`, `sample-items`, `create-sample-item`, `update-sample-item`. */
import { Type } from 'typebox';
import { resourceSchemas } from '../resources/schemas.js';
import { SAMPLE_ITEM_FIELDS } from './fields.js';

const schemas = resourceSchemas({ name: 'sample-item', plural: 'sample-items' }, SAMPLE_ITEM_FIELDS);

export const SampleItem = schemas.item;
export const SampleItems = schemas.page;
export const CreateSampleItem = schemas.create;
export const UpdateSampleItem = schemas.update;

export const SampleItemPath = Type.Object(
  { id: Type.String({ format: 'uuid' }), itemId: Type.String({ format: 'uuid', description: "the sample item's id" }) },
  { additionalProperties: false },
);

export const SAMPLE_ITEM_SCHEMAS = [SampleItem, SampleItems, CreateSampleItem, UpdateSampleItem];
