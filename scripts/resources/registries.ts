/**
 * The names a resource takes beyond its files and table (docs/resources.md, "Refusals"), checked
 * against what the project's running code registered: a system built on a memory database
 * (system-snapshot.ts) gives its named schemas, query kinds, webhook event types, OAuth scopes
 * and MCP tools; the audit log's action names are its label list. A clash would stop the system
 * at start (a schema's `$id` or a tool's name twice) or mix the resource's entries and events
 * with another's.
 */
import type { ResourceSpec } from './spec.js';
import { SpecError, toolNames } from './spec.js';

export interface Registries {
  /** named schemas (`components.schemas`), by `$id` */
  schemas: ReadonlySet<string>;
  /** query kinds, `<group>/<name>` */
  queryKinds: readonly string[];
  webhookEventTypes: ReadonlySet<string>;
  auditActions: ReadonlySet<string>;
  oauthScopes: ReadonlySet<string>;
  /** the MCP server's tools, by name */
  tools: ReadonlySet<string>;
}

const VERBS = ['created', 'updated', 'deleted'];

/** Builds the system, reads its registries, stops it. */
export async function readRegistries(): Promise<Registries> {
  // imported here: the whole system loads only for a spec that passed every other check
  const [{ buildSnapshotSystem }, { queryModule }, { mcpModule }, { AUDIT_ACTION_LABELS }] = await Promise.all([
    import('../system-snapshot.js'),
    import('../../src/query/module.js'),
    import('../../src/mcp/module.js'),
    import('../../src/client/audit/action-labels.js'),
  ]);
  let system: Awaited<ReturnType<typeof buildSnapshotSystem>>;
  try {
    system = await buildSnapshotSystem();
  } catch (err) {
    throw new SpecError(`the project does not start, so the names it uses cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    const types = await system.app.inject({ method: 'GET', url: '/api/webhooks/event-types', headers: { accept: 'application/json' } });
    const doc = system.app.swagger() as { components?: { securitySchemes?: { oauth?: { flows?: { authorizationCode?: { scopes?: object } } } } } };
    return {
      schemas: new Set(Object.keys(system.app.getSchemas())),
      queryKinds: system.services(queryModule).registry.names,
      webhookEventTypes: new Set((types.json() as { 'event-types': string[] })['event-types']),
      auditActions: new Set(Object.keys(AUDIT_ACTION_LABELS)),
      oauthScopes: new Set(Object.keys(doc.components?.securitySchemes?.oauth?.flows?.authorizationCode?.scopes ?? {})),
      tools: new Set(system.services(mcpModule).tools().keys()),
    };
  } finally {
    await system.stop();
  }
}

/** Refuses (a SpecError naming the first clash) a resource whose schemas, events, audit actions, query kind group, scopes or tools exist. */
export function checkRegistries(spec: Pick<ResourceSpec, 'name' | 'plural'>, registries: Registries): void {
  const { name, plural } = spec;
  const taken = (what: string) => new SpecError(`"${name.kebab}" is taken: ${what} exists in the running system`);
  for (const schema of [name.kebab, plural.kebab, `create-${name.kebab}`, `update-${name.kebab}`]) {
    if (registries.schemas.has(schema)) throw taken(`the OpenAPI schema "${schema}"`);
  }
  for (const event of VERBS.map((verb) => `${name.kebab}.${verb}`)) {
    if (registries.webhookEventTypes.has(event)) throw taken(`the webhook event type "${event}"`);
    if (registries.auditActions.has(event)) throw taken(`the audit action "${event}"`);
  }
  const kind = registries.queryKinds.find((k) => k.startsWith(`${plural.kebab}/`));
  if (kind) throw taken(`the query kind group "${plural.kebab}" (${kind})`);
  for (const scope of [`${plural.kebab}:read`, `${plural.kebab}:write`]) {
    if (registries.oauthScopes.has(scope)) throw taken(`the OAuth scope "${scope}"`);
  }
  for (const tool of toolNames(spec)) {
    if (registries.tools.has(tool)) throw taken(`the MCP tool "${tool}"`);
  }
}
