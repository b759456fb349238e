/**
 * Query kinds are data, like routes: each feature module declares its kinds (name, summary,
 * parameter schema, result schema, auth requirement, run) and the query endpoint dispatches
 * on `query/kind`. Parameters and results are validated per kind; the OpenAPI document lists
 * every kind with its schemas.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { ajvErrors, badRequest, requestCoercion, ResponseCoercionError, unauthorized } from '../http/errors.js';
import type { AuthUser } from '../http/routes.js';

export interface QueryContext<P extends TObject> {
  user: AuthUser | undefined;
  params: Static<P>;
}

export interface QueryDefinition<P extends TObject, R extends TSchema> {
  /** `<group>/<name>` */
  kind: string;
  summary: string;
  auth: 'required' | 'none';
  /** the parameters beside `query/kind` at the top of the body */
  params: P;
  /** a named schema (with `$id`) */
  result: R;
  run(ctx: QueryContext<P>): Promise<Static<R>>;
}

/** A query kind with its types erased, as the registry holds them. */
export interface QueryKind {
  kind: string;
  summary: string;
  auth: 'required' | 'none';
  params: TObject;
  result: TSchema;
  run(ctx: { user: AuthUser | undefined; params: unknown }): Promise<unknown>;
}

export function queryKind<P extends TObject, R extends TSchema>(definition: QueryDefinition<P, R>): QueryKind {
  if (!/^[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*$/.test(definition.kind)) throw new Error(`Query kind "${definition.kind}" must look like <group>/<name>`);
  return definition as unknown as QueryKind;
}

/** `:account/me` and `account/me` name the same kind. */
export function normalizeKind(value: unknown): string | undefined {
  return typeof value === 'string' ? value.replace(/^:/, '') : undefined;
}

export class QueryRegistry {
  private readonly kinds = new Map<string, { def: QueryKind; params: ValidateFunction; result: ValidateFunction }>();

  constructor(kinds: QueryKind[], sharedSchemas: TSchema[]) {
    const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true });
    addFormats.default(ajv);
    for (const s of sharedSchemas) ajv.addSchema(s);
    for (const def of kinds) {
      if (this.kinds.has(def.kind)) throw new Error(`Query kind "${def.kind}" is declared twice`);
      this.kinds.set(def.kind, { def, params: ajv.compile(def.params), result: ajv.compile(def.result) });
    }
  }

  get names(): string[] {
    return [...this.kinds.keys()].sort();
  }

  get definitions(): QueryKind[] {
    return [...this.kinds.values()].map((k) => k.def);
  }

  /** Validates and runs one query; the body is `{query/kind, ...params}`. */
  async run(body: Record<string, unknown>, user: AuthUser | undefined): Promise<unknown> {
    const kind = normalizeKind(body['query/kind']);
    const entry = kind ? this.kinds.get(kind) : undefined;
    if (!entry) {
      throw badRequest({ type: 'unknown-query-kind', message: `Unknown query kind ${JSON.stringify(body['query/kind'] ?? null)}`, kind: kind ?? null, known: this.names });
    }
    if (entry.def.auth === 'required' && !user) throw unauthorized();
    const { 'query/kind': _kind, ...params } = body;
    if (!entry.params(params)) {
      throw requestCoercion('body', ajvErrors(entry.params.errors), `Invalid parameters for ${entry.def.kind}`);
    }
    const result = await entry.def.run({ user, params });
    if (!entry.result(result)) {
      throw new ResponseCoercionError(200, ajvErrors(entry.result.errors), result);
    }
    return result;
  }

  /** The request body as documented: one schema per kind. */
  documentedBody(): TSchema {
    return Type.Union(this.definitions.map((d) => Type.Object(
      { 'query/kind': Type.Literal(d.kind, { description: d.summary }), ...d.params.properties },
      { additionalProperties: false, title: d.kind, description: `${d.summary}${d.auth === 'required' ? ' (needs an access token)' : ''}` },
    )));
  }
}
