/**
 * Route schemas as a tool's self-contained JSON Schema: every `$ref` to a named schema (the API's
 * `ref(...)`, resolved by its `$id`) inlined, and TypeBox's own marks and every `$id` left out, so a
 * client compiles each tool's schema on its own without knowing the API's components (and two
 * tools embedding the same named schema never clash in one validator).
 */
import type { TSchema } from 'typebox';
import { resolved } from '../http/routes.js';

export type JsonSchema = { [key: string]: unknown };

/** The named schemas, by `$id`. */
export function schemasById(schemas: readonly TSchema[]): Map<string, TSchema> {
  return new Map(
    schemas.flatMap((s) => {
      const id = (s as { $id?: unknown }).$id;
      return typeof id === 'string' ? [[id, s] as const] : [];
    }),
  );
}

/** `schema` with its references inlined; throws at start-up for an unknown or recursive one. */
export function selfContained(schema: TSchema, byId: ReadonlyMap<string, TSchema>, where: string): JsonSchema {
  const inline = (node: unknown, within: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => inline(n, within));
    if (node === null || typeof node !== 'object') return node;
    const referent = resolved(node as TSchema);
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      const id = ref.replace(/#$/, '');
      const target = referent !== node ? referent : byId.get(id);
      if (!target) throw new Error(`${where}: no named schema ${id}`);
      if (within.includes(id)) throw new Error(`${where}: schema ${id} refers to itself; a tool's schema is inlined whole`);
      return inline(target, [...within, id]);
    }
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) if (key !== '$id' && key !== '$schema') out[key] = inline(value, within);
    return out;
  };
  return inline(schema, []) as JsonSchema;
}
