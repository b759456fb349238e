/**
 * The named schemas of a resource from its fields (src/shared/resource-fields.ts): the item
 * `<name>`, the page `<plural>`, the bodies `create-<name>` and `update-<name>`, and the list's
 * query. What each type accepts (docs/resources.md, "Usage"): a decimal as a number or a
 * string, a date a real calendar day, a date-time ISO 8601 with an offset, a file the id of a
 * completed upload (answered as the file, with a signed link).
 */
import { Type, type TSchema, type TUnsafe } from 'typebox';
import { NOT_BLANK } from '../http/errors.js';
import { DECIMAL_PATTERN, humanize, INTEGER_MAX, INTEGER_MIN, STRING_MAX, TEXT_MAX, type FieldSpec, type FieldSpecs } from '../shared/resource-fields.js';
import type { ResourceInput, ResourceItem } from './table.js';

/** What a request may send for a field (a decimal as a number too, a file its id); `plural` names a file's purpose. */
function inputSchema(plural: string, name: string, field: FieldSpec): TSchema {
  const description = humanize(name);
  switch (field.type) {
    case 'file':
    case 'image':
      return Type.String({
        format: 'uuid',
        description: `${description}: the id of a completed upload of purpose \`${plural}.${name}\` (POST /api/uploads)${field.type === 'image' ? ', a PNG, JPEG or WebP image' : ''}`,
      });
    case 'string':
      return Type.String({ minLength: 1, maxLength: STRING_MAX, pattern: NOT_BLANK, description });
    case 'text':
      return Type.String({ maxLength: TEXT_MAX, description });
    case 'integer':
      return Type.Integer({ minimum: INTEGER_MIN, maximum: INTEGER_MAX, description });
    case 'decimal':
      // a number within the string's 30 digits before the point (1e40 would be stored as 41 digits)
      return Type.Union([Type.String({ pattern: DECIMAL_PATTERN }), Type.Number({ exclusiveMinimum: -1e30, exclusiveMaximum: 1e30 })], {
        description: `${description}: an exact decimal, e.g. "1234.50"`,
      });
    case 'boolean':
      return Type.Boolean({ description });
    case 'date':
      return Type.String({ format: 'date', description: `${description} (YYYY-MM-DD)` });
    case 'datetime':
      return Type.String({ format: 'date-time', description: `${description} (ISO 8601 with an offset)` });
    case 'enum':
      return Type.Enum([...(field.values ?? [])], { description });
  }
}

/** A file field's answer: the stored file, a signed link, an image's renditions. */
function fileSchema(name: string, field: FieldSpec): TSchema {
  const link = (description: string) => Type.String({ description: `${description}, a signed link valid 5 minutes` });
  return Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      'content-type': Type.String(),
      size: Type.Integer({ description: 'bytes' }),
      url: link('the file'),
      ...(field.type === 'image' ? { renditions: Type.Object({ '64': link('64 px WebP'), '256': link('256 px WebP') }, { additionalProperties: false }) } : {}),
    },
    { additionalProperties: false, description: humanize(name) },
  );
}

/** What the API answers for a field: a decimal as its exact string, a date-time in UTC, a file as itself. */
function outputSchema(plural: string, name: string, field: FieldSpec): TSchema {
  const schema =
    field.type === 'decimal'
      ? Type.String({ description: `${humanize(name)}: an exact decimal` })
      : field.type === 'datetime'
        ? Type.String({ format: 'date-time', description: `${humanize(name)}, in UTC` })
        : field.type === 'file' || field.type === 'image'
          ? fileSchema(name, field)
          : inputSchema(plural, name, field);
  return field.optional ? Type.Union([schema, Type.Null()]) : schema;
}

const nullable = (schema: TSchema, field: FieldSpec) => (field.optional ? Type.Union([schema, Type.Null()]) : schema);

export interface ResourceNames<Plural extends string> {
  /** singular, kebab-case: `time-entry` */
  name: string;
  /** its plural: `time-entries` */
  plural: Plural;
}

/** A page of a list: the items under the plural's key, and the next page's cursor. */
export type ResourceList<Plural extends string> = { [K in Plural]: ResourceItem[] } & { 'next-cursor': string | null };

/** The schemas, typed as what they accept and answer (built from data, so TypeScript cannot infer it). */
export interface ResourceSchemas<Plural extends string> {
  item: TUnsafe<ResourceItem>;
  page: TUnsafe<ResourceList<Plural>>;
  create: TUnsafe<ResourceInput>;
  update: TUnsafe<ResourceInput>;
}

export function resourceSchemas<Plural extends string>({ name, plural }: ResourceNames<Plural>, fields: FieldSpecs): ResourceSchemas<Plural> {
  const entries = Object.entries(fields);
  const item = Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      ...Object.fromEntries(entries.map(([field, spec]) => [field, outputSchema(plural, field, spec)])),
      'created-at': Type.String({ format: 'date-time' }),
      'updated-at': Type.String({ format: 'date-time' }),
    },
    { $id: name, additionalProperties: false },
  );
  const page = Type.Object(
    {
      [plural]: Type.Array(item, { description: 'newest first' }),
      'next-cursor': Type.Union([Type.String(), Type.Null()], { description: 'the `cursor` of the next page; null on the last' }),
    },
    { $id: plural, additionalProperties: false },
  );
  const create = Type.Object(
    Object.fromEntries(
      entries.map(([field, spec]) => {
        const schema = inputSchema(plural, field, spec);
        return [field, spec.optional ? Type.Optional(nullable(schema, spec)) : schema];
      }),
    ),
    { $id: `create-${name}`, additionalProperties: false },
  );
  const update = Type.Object(Object.fromEntries(entries.map(([field, spec]) => [field, Type.Optional(nullable(inputSchema(plural, field, spec), spec))])), {
    $id: `update-${name}`,
    additionalProperties: false,
    minProperties: 1,
    description: 'any non-empty subset of the fields; `null` clears an optional one',
  });
  return { item, page, create, update } as unknown as ResourceSchemas<Plural>;
}

/** `limit` 1..100 (default 20) and the previous page's `next-cursor` */
export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next-cursor` of the previous page' })),
  },
  { additionalProperties: false },
);
