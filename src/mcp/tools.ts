/**
 * The MCP server's tools, read from route data (`tool` on a route: docs/mcp.md): each tool is one
 * route. Its input schema is one object of the route's path parameters (an organization route's
 * `:id` named `organization-id`), query and body fields, named as in the API; its output schema is
 * the route's 2xx answer; its annotations follow from the method. A call becomes the route's own
 * HTTP request ({@link toRequest}), which the app runs through every gate.
 */
import type { TSchema } from 'typebox';
import { requestCoercionBody, type ErrorBody } from '../http/errors.js';
import { resolved, type OrgRole, type Route, type RouteGroup } from '../http/routes.js';
import { schemasById, selfContained, type JsonSchema } from './json-schema.js';

/** A tool as `tools/list` shows it. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema?: JsonSchema & { type: 'object' };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export interface Tool {
  listing: ToolListing;
  method: Route['method'];
  /** the route's path, `:name` for each path parameter */
  path: string;
  /** path parameters: the route's name and the argument's */
  pathParams: Array<{ param: string; argument: string }>;
  queryFields: ReadonlySet<string>;
  /** the body's fields; undefined for a route without a body */
  bodyFields: ReadonlySet<string> | undefined;
  scopes: readonly string[];
  apiKeys: boolean;
  /** the role the route needs in its organization */
  orgRole: OrgRole | undefined;
}

/** An organization route's organization, as a tool's argument: `:id` alone would not say whose. */
export const ORGANIZATION_ARGUMENT = 'organization-id';

type ObjectSchema = { properties?: Record<string, TSchema>; required?: string[] };

const objectOf = (schema: TSchema | undefined) => resolved(schema) as ObjectSchema | undefined;

function inputOf(r: Route, where: string, byId: ReadonlyMap<string, TSchema>) {
  const properties: JsonSchema = {};
  const required: string[] = [];
  const add = (name: string, schema: TSchema, isRequired: boolean) => {
    if (name in properties) throw new Error(`${where}: tool argument ${name} is both a path, query or body field`);
    properties[name] = selfContained(schema, byId, where);
    if (isRequired) required.push(name);
  };
  const params = objectOf(r.schemas.params);
  const pathParams = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, param]) => ({
    param: param!,
    argument: r.orgRole && param === (r.orgParam ?? 'id') ? ORGANIZATION_ARGUMENT : param!,
  }));
  for (const { param, argument } of pathParams) {
    const schema = params?.properties?.[param];
    if (!schema) throw new Error(`${where}: tool needs a schema of the path parameter ${param}`);
    add(argument, argument === ORGANIZATION_ARGUMENT ? { ...schema, description: 'the organization’s id' } : schema, true);
  }
  const query = objectOf(r.schemas.querystring);
  for (const [name, schema] of Object.entries(query?.properties ?? {})) add(name, schema, query?.required?.includes(name) ?? false);
  const body = objectOf(r.schemas.body);
  if (r.schemas.body && !body?.properties) throw new Error(`${where}: a tool's body must be an object schema`);
  for (const [name, schema] of Object.entries(body?.properties ?? {})) add(name, schema, body?.required?.includes(name) ?? false);
  const inputSchema = { type: 'object' as const, properties, ...(required.length ? { required } : {}), additionalProperties: false };
  return {
    inputSchema,
    pathParams,
    queryFields: new Set(Object.keys(query?.properties ?? {})),
    bodyFields: body ? new Set(Object.keys(body.properties!)) : undefined,
  };
}

function outputOf(r: Route, where: string, byId: ReadonlyMap<string, TSchema>): ToolListing['outputSchema'] {
  const statuses = Object.keys(r.schemas.response).map(Number);
  const status = r.status ?? Math.min(...statuses.filter((s) => s >= 200 && s < 300));
  const schema = r.schemas.response[status];
  if (!schema) return undefined;
  const output = selfContained(schema, byId, where);
  // MCP's structured content is an object: an answer of another shape is the text alone
  return output.type === 'object' ? (output as JsonSchema & { type: 'object' }) : undefined;
}

function toolOf(group: RouteGroup, r: Route, byId: ReadonlyMap<string, TSchema>): Tool {
  const where = `Route ${r.method} ${group.prefix}${r.path}`;
  const { name, title, description } = r.tool!;
  const input = inputOf(r, where, byId);
  const outputSchema = outputOf(r, where, byId);
  const readOnly = r.method === 'GET';
  return {
    listing: {
      name,
      title,
      description,
      inputSchema: input.inputSchema,
      ...(outputSchema ? { outputSchema } : {}),
      annotations: {
        title,
        readOnlyHint: readOnly,
        destructiveHint: r.method === 'DELETE',
        idempotentHint: readOnly || r.method === 'PUT' || r.method === 'DELETE',
        // the product's own data, nothing beyond it
        openWorldHint: false,
      },
    },
    method: r.method,
    path: group.prefix + r.path,
    pathParams: input.pathParams,
    queryFields: input.queryFields,
    bodyFields: input.bodyFields,
    scopes: r.scopes ?? [],
    apiKeys: r.apiKeys === true,
    orgRole: r.orgRole,
  };
}

/** Every route's tool, by name; throws at start-up for two tools of one name or a schema that does not fit. */
export function toolsOf(groups: readonly RouteGroup[], schemas: readonly TSchema[]): ReadonlyMap<string, Tool> {
  const byId = schemasById(schemas);
  const tools = new Map<string, Tool>();
  for (const group of groups)
    for (const r of group.routes) {
      if (!r.tool) continue;
      if (tools.has(r.tool.name)) throw new Error(`Route ${r.method} ${group.prefix}${r.path}: another route is the tool ${r.tool.name} already`);
      tools.set(r.tool.name, toolOf(group, r, byId));
    }
  return tools;
}

/** The route's HTTP request for a call's arguments, or the API's 400 naming each argument that cannot make one. */
export type ToolRequest = { method: Route['method']; url: string; body: Record<string, unknown> | undefined } | { refused: ErrorBody };

const isScalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

export function toRequest(tool: Tool, args: Record<string, unknown>): ToolRequest {
  const errors: Array<{ path: string; message: string }> = [];
  let path = tool.path;
  const taken = new Set<string>();
  for (const { param, argument } of tool.pathParams) {
    taken.add(argument);
    const value = args[argument];
    if (typeof value !== 'string' || value === '') errors.push({ path: `/${argument}`, message: value === undefined ? 'is required' : 'must be a string' });
    else path = path.replace(`:${param}`, encodeURIComponent(value));
  }
  const query = new URLSearchParams();
  for (const name of tool.queryFields) {
    taken.add(name);
    const value = args[name];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!values.every(isScalar)) errors.push({ path: `/${name}`, message: 'must be a string, a number, a boolean or a list of them' });
    else for (const v of values) query.append(name, String(v));
  }
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (taken.has(name)) continue;
    // a field the body schema does not name is the route's to refuse (its own 400); without a body, here
    if (tool.bodyFields) body[name] = value;
    else errors.push({ path: `/${name}`, message: 'is not an argument of this tool' });
  }
  if (errors.length > 0) return { refused: requestCoercionBody('body', errors, 'Invalid arguments') };
  const search = query.toString();
  return { method: tool.method, url: search ? `${path}?${search}` : path, body: tool.bodyFields ? body : undefined };
}
