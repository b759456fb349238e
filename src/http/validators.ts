/**
 * The Ajv instances that check requests and responses against their routes' schemas (steps 6
 * and 7 of the pipeline, src/http/pipeline.ts).
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from 'typebox';

export interface Validators {
  /** responses, checked against their schemas as they are */
  responses: Ajv;
  /** query strings, paths and forms: text, coerced to the schema's types */
  coercing: Ajv;
  /** JSON, EDN and Transit bodies: taken as typed */
  typed: Ajv;
}

/**
 * The Ajv instances, by the shared schemas they hold. An app built again in the same process
 * with the same schemas (tests build a hundred) takes the same instances, and with them Ajv's
 * cache of what it compiled: compiling every route's schemas again cost a fifth of a test
 * file's CPU. A few sets at most are kept.
 */
const validatorSets: Array<{ schemas: TSchema[]; validators: Validators }> = [];

export function validatorsFor(schemas: TSchema[]): Validators {
  const same = validatorSets.find((set) => set.schemas.length === schemas.length && set.schemas.every((schema, i) => schema === schemas[i]));
  if (same) return same.validators;
  // A query string, a path and a form hold only text, so their values are coerced to the
  // schema's types (`?limit=5` is the number 5). JSON, EDN and Transit bodies carry their own
  // types and are taken as they are: `{"slug": false}` is a boolean, refused where a string
  // is expected, never stored as "false".
  const make = (options: { coerceTypes?: 'array' | false; useDefaults?: boolean }) => {
    const instance = new Ajv({ allErrors: true, strict: false, removeAdditional: false, ...options });
    addFormats.default(instance);
    for (const schema of schemas) instance.addSchema(schema);
    return instance;
  };
  const validators = {
    responses: make({}),
    coercing: make({ coerceTypes: 'array', useDefaults: true }),
    typed: make({ coerceTypes: false, useDefaults: true }),
  };
  if (validatorSets.length >= 4) validatorSets.shift();
  validatorSets.push({ schemas: [...schemas], validators });
  return validators;
}
