/**
 * Named schemas in an order Ajv and the OpenAPI document accept: a named schema (one with an
 * `$id`) that another embeds whole must be added before it, or the embedding one registers the
 * `$id` first and the later addition collides. Modules contribute schemas in module order, so
 * the order is derived here rather than kept by hand.
 */
import type { TSchema } from 'typebox';

/** The `$id`s of the named schemas embedded anywhere inside `schema` (not itself). */
function embeddedIds(schema: unknown, out: Set<string>, top = true): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) embeddedIds(item, out, false);
  } else if (schema !== null && typeof schema === 'object') {
    const id = (schema as { $id?: unknown }).$id;
    if (!top && typeof id === 'string') out.add(id);
    for (const value of Object.values(schema)) embeddedIds(value, out, false);
  }
  return out;
}

/** `schemas` with every embedded named schema before the schemas that embed it; otherwise in the given order. */
export function embeddedFirst(schemas: readonly TSchema[]): TSchema[] {
  const byId = new Map<string, TSchema>();
  for (const schema of schemas) {
    const id = (schema as { $id?: string }).$id;
    if (id) byId.set(id, schema);
  }
  const ordered: TSchema[] = [];
  const placed = new Set<TSchema>();
  const place = (schema: TSchema) => {
    if (placed.has(schema)) return;
    placed.add(schema);
    for (const id of embeddedIds(schema, new Set())) {
      const embedded = byId.get(id);
      if (embedded) place(embedded);
    }
    ordered.push(schema);
  };
  for (const schema of schemas) place(schema);
  return ordered;
}
