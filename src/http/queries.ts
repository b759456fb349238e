/**
 * Query kinds are data, like routes: each feature module declares its kinds (name, summary,
 * parameter schema, result schema, auth requirement, run) and the query endpoint dispatches
 * on `query/kind`. Parameters and results are validated per kind; the OpenAPI document lists
 * every kind with its schemas. A kind on an organization declares `orgRole` like a route: the
 * registry checks the caller's membership of the organization its `org-id` names before it
 * runs, and, with `apiKeys`, takes that organization's API key as the caller.
 */
import type { ValidateFunction } from 'ajv';
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { isFormBody } from './formats.js';
import { validatorsFor } from './validators.js';
import { ajvErrors, badRequest, ResponseCoercionError, SchemaRefusal, unauthorized } from './errors.js';
import { msg, phrase } from '../i18n/messages.js';
import { actorOf, authorizeOrg, type Actor, type Caller } from './org-access.js';
import { insufficientScope } from './route-gates.js';
import type { ApiKeyCaller, AuthUser, Membership, MembershipResolver, OrgRole } from './routes.js';

export interface QueryContext<P extends TObject> {
  user: AuthUser | undefined;
  /** the caller when an API key came (kinds with `apiKeys` only) */
  apiKey: ApiKeyCaller | undefined;
  /** the caller's membership of the organization `org-id` names (kinds with `orgRole`) */
  membership: Membership | undefined;
  /** who acts, for audit entries */
  actor: Actor | undefined;
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
  /** the role the caller needs in the organization named by the parameter `orgParam`; implies auth `required` */
  orgRole?: OrgRole;
  /** the parameter naming the organization (a UUID), for `orgRole`; default `org-id` */
  orgParam?: string;
  /** take the organization's API key as the caller (needs `orgRole`), like a route's `apiKeys` */
  apiKeys?: boolean;
  /** OAuth scopes that let an OAuth access token run it, like a route's `scopes` (none: 403 `insufficient-scope`) */
  scopes?: readonly string[];
  run(ctx: QueryContext<P>): Promise<Static<R>>;
}

/** A query kind with its types erased, as the registry holds them. */
export interface QueryKind {
  kind: string;
  summary: string;
  auth: 'required' | 'none';
  params: TObject;
  result: TSchema;
  orgRole?: OrgRole;
  orgParam?: string;
  apiKeys?: boolean;
  scopes?: readonly string[];
  run(ctx: QueryContext<TObject>): Promise<unknown>;
}

export function queryKind<P extends TObject, R extends TSchema>(definition: QueryDefinition<P, R>): QueryKind {
  if (!/^[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*$/.test(definition.kind)) throw new Error(`Query kind "${definition.kind}" must look like <group>/<name>`);
  const orgParam = definition.orgParam ?? 'org-id';
  // a UUID by its schema: anything else would reach the membership lookup's uuid column
  if (definition.orgRole && (definition.params.properties[orgParam] as { format?: string } | undefined)?.format !== 'uuid') {
    throw new Error(`Query kind "${definition.kind}": orgRole needs the parameter ${orgParam}, a string of format uuid`);
  }
  if (definition.apiKeys && !definition.orgRole) throw new Error(`Query kind "${definition.kind}": apiKeys needs orgRole`);
  if (definition.scopes && definition.auth !== 'required' && !definition.orgRole) throw new Error(`Query kind "${definition.kind}": scopes need auth required`);
  return definition as unknown as QueryKind;
}

/** `:account/me` and `account/me` name the same kind. */
export function normalizeKind(value: unknown): string | undefined {
  return typeof value === 'string' ? value.replace(/^:/, '') : undefined;
}

export const API_KEYS_ONLY_ON_ORG_KINDS = msg('API keys only work with the query kinds of an organization (those that take an `org-id`)');

export interface QueryRegistryOptions {
  /** looks up memberships for the kinds with `orgRole` (required when one has it) */
  memberships?: MembershipResolver;
}

export class QueryRegistry {
  private readonly kinds = new Map<string, { def: QueryKind; params: ValidateFunction; formParams: ValidateFunction; result: ValidateFunction }>();
  private readonly memberships: MembershipResolver | undefined;

  constructor(kinds: QueryKind[], sharedSchemas: TSchema[], options: QueryRegistryOptions = {}) {
    this.memberships = options.memberships;
    // parameters are taken as typed from JSON, EDN and Transit, and coerced from a form's text
    // (`limit=20` is the number 20), by the validators the pipeline checks every route's body with
    const { typed, coercing } = validatorsFor(sharedSchemas);
    for (const def of kinds) {
      if (this.kinds.has(def.kind)) throw new Error(`Query kind "${def.kind}" is declared twice`);
      if (def.orgRole && !this.memberships) throw new Error(`Query kind "${def.kind}": orgRole needs the registry's memberships resolver`);
      this.kinds.set(def.kind, { def, params: typed.compile(def.params), formParams: coercing.compile(def.params), result: typed.compile(def.result) });
    }
  }

  get names(): string[] {
    return [...this.kinds.keys()].sort();
  }

  get definitions(): QueryKind[] {
    return [...this.kinds.values()].map((k) => k.def);
  }

  /**
   * Validates and runs one query; the body is `{query/kind, ...params}`. `caller.failure` says why
   * a presented token was refused (the 401's message).
   */
  async run(body: Record<string, unknown>, caller: Caller & { failure?: string }): Promise<unknown> {
    const { user, apiKey } = caller;
    const kind = normalizeKind(body['query/kind']);
    const entry = kind ? this.kinds.get(kind) : undefined;
    if (!entry) {
      throw badRequest({
        type: 'unknown-query-kind',
        message: phrase('Unknown query kind {kind}', { kind: JSON.stringify(body['query/kind'] ?? null) }),
        kind: kind ?? null,
        known: this.names,
      });
    }
    const { def } = entry;
    if (apiKey && !def.apiKeys) throw unauthorized(API_KEYS_ONLY_ON_ORG_KINDS);
    if (user?.oauth && !def.scopes?.some((scope) => user.oauth!.scopes.includes(scope))) throw insufficientScope(def.scopes ?? []);
    if ((def.auth === 'required' || def.orgRole) && !user && !apiKey) throw unauthorized(caller.failure);
    const { 'query/kind': _kind, ...params } = body;
    const validate = isFormBody(body) ? entry.formParams : entry.params;
    if (!validate(params)) {
      throw new SchemaRefusal('body', validate.errors ?? [], phrase('Invalid parameters for {kind}', { kind: def.kind }));
    }
    const membership = def.orgRole
      ? await authorizeOrg(caller, String(params[def.orgParam ?? 'org-id']), def.orgRole, this.memberships!, caller.failure)
      : undefined;
    const result = await def.run({ user, apiKey, membership, actor: actorOf(caller), params });
    if (!entry.result(result)) {
      throw new ResponseCoercionError(200, ajvErrors(entry.result.errors), result);
    }
    return result;
  }

  /** The request body as documented: one schema per kind. */
  documentedBody(): TSchema {
    return Type.Union(
      this.definitions.map((d) =>
        Type.Object(
          { 'query/kind': Type.Literal(d.kind, { description: d.summary }), ...d.params.properties },
          {
            additionalProperties: false,
            title: d.kind,
            description: `${d.summary}${d.apiKeys ? ' (needs an access token or an API key of the organization)' : d.auth === 'required' ? ' (needs an access token)' : ''}`,
          },
        ),
      ),
    );
  }
}
