/**
 * The OpenAPI 3.0 dialect of the route schemas: TypeBox writes JSON Schema 2020, whose
 * `exclusiveMinimum`/`exclusiveMaximum` are the bound itself (a number), where OpenAPI 3.0 (a
 * JSON Schema draft 4 subset) has a boolean beside `minimum`/`maximum`. The document is rewritten
 * once when it is rendered (openapi.ts); validation keeps reading the 2020 schemas.
 */

/** keys whose values are data (an example, an enum's values), never schemas: left as they are */
const VALUES = new Set(['example', 'examples', 'default', 'enum', 'const', 'x-examples']);

type Json = unknown;

/** `{exclusiveMinimum: n}` -> `{minimum: n, exclusiveMinimum: true}` (a stricter `minimum` beside it wins), likewise for the maximum. */
function bounds(schema: Record<string, Json>): Record<string, Json> {
  const out = { ...schema };
  const low = out.exclusiveMinimum;
  if (typeof low === 'number') {
    if (typeof out.minimum === 'number' && out.minimum > low) delete out.exclusiveMinimum;
    else Object.assign(out, { minimum: low, exclusiveMinimum: true });
  }
  const high = out.exclusiveMaximum;
  if (typeof high === 'number') {
    if (typeof out.maximum === 'number' && out.maximum < high) delete out.exclusiveMaximum;
    else Object.assign(out, { maximum: high, exclusiveMaximum: true });
  }
  return out;
}

/** A copy of `value` (a document, or any part of one) in OpenAPI 3.0's form. */
export function toOpenApi30<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => toOpenApi30(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, Json>).map(([key, v]) => [key, VALUES.has(key) ? v : toOpenApi30(v)]);
  return bounds(Object.fromEntries(entries)) as T;
}
