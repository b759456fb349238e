/**
 * The MCP server's tools with the official SDK client (docs/mcp.md): an organization's API key
 * lists the tools of routes that take keys and calls them; an OAuth token for `APP_URL/mcp` lists
 * and calls the tools its scopes open; each call runs its route's gates (another organization:
 * not-found; below the role: forbidden; bad arguments: the API's 400 naming the field); a missing
 * scope is HTTP 403 with the step-up challenge; an unknown tool is a JSON-RPC error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as client from 'openid-client';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { connect, errorOf, mcpApp, mcpToken, post, rpc } from './support.js';

const sorted = (tools: Array<{ name: string }>) => tools.map((t) => t.name).sort();

describe('MCP tools on pglite', () => {
  let t: TestSystem;
  let owner: TestAccount;
  let person: TestAccount;
  let orgId: string;
  let otherOrgId: string;
  let config: client.Configuration;
  let reader: string;
  const clients: Client[] = [];
  const open = async (credential: string) => {
    const c = await connect(t.url, credential);
    clients.push(c);
    return c;
  };

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
    owner = await account(t);
    person = await account(t);
    orgId = await createOrg(t, owner, 'Acme');
    otherOrgId = await createOrg(t, await account(t), 'Elsewhere');
    await addMember(t, orgId, owner, person, 'member');
    config = await mcpApp(t, owner.token, orgId, ['offline_access', 'account:read', 'orgs:read', 'orgs:write']);
    reader = await mcpToken(t, config, person.token, 'account:read orgs:read');
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
  });

  it('an API key lists the tools of the routes that take keys its role reaches, and calls get-organization and list-members', async () => {
    const key = await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'agent', role: 'member' });
    assert.equal(key.status, 201, key.text);
    const mcp = await open(key.body.key);
    const { tools } = await mcp.listTools();
    assert.deepEqual(sorted(tools), ['get-organization', 'list-members'], 'rename-organization needs an admin');
    const get = tools.find((tool) => tool.name === 'get-organization')!;
    assert.deepEqual(get.inputSchema.required, ['organization-id']);
    assert.equal(get.annotations?.readOnlyHint, true);
    assert.equal(get.annotations?.idempotentHint, true);
    assert.equal(get.annotations?.destructiveHint, false);
    const output = get.outputSchema as { type: string; properties: Record<string, { type?: string }> };
    assert.equal(output.type, 'object');
    assert.equal(output.properties.id?.type, 'string', 'the answer schema, inlined');
    assert.deepEqual(Object.keys(get.inputSchema.properties ?? {}), ['organization-id']);
    assert.equal(JSON.stringify(tools).includes('$ref'), false, 'every schema self-contained');

    const org = await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': orgId } });
    assert.equal(org.isError, undefined);
    assert.equal((org.structuredContent as { id: string }).id, orgId);
    assert.deepEqual(JSON.parse((org.content as Array<{ text: string }>)[0]!.text), org.structuredContent);
    const members = await mcp.callTool({ name: 'list-members', arguments: { 'organization-id': orgId } });
    const emails = (members.structuredContent as { members: Array<{ email: string }> }).members.map((m) => m.email).sort();
    assert.deepEqual(emails, [owner.email, person.email].sort());
    // a key of one organization is a stranger to another: the route's 404
    assert.equal(errorOf(await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': otherOrgId } })).type, 'not-found');
    // a member key below the role the route needs: unlisted, and the route's 403 when called anyway
    assert.equal(errorOf(await mcp.callTool({ name: 'rename-organization', arguments: { 'organization-id': orgId, name: 'X' } })).type, 'forbidden');
    // a key never acts as a person: an account route answers it 401 through the API's own rule
    assert.equal(errorOf(await mcp.callTool({ name: 'get-account', arguments: {} })).type, 'unauthorized');
  });

  it('an admin key lists and calls rename-organization', async () => {
    const key = await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'admin agent', role: 'admin' });
    const mcp = await open(key.body.key);
    assert.deepEqual(sorted((await mcp.listTools()).tools), ['get-organization', 'list-members', 'rename-organization']);
    const renamed = await mcp.callTool({ name: 'rename-organization', arguments: { 'organization-id': orgId, slug: `acme-${Date.now()}` } });
    assert.equal(renamed.isError, undefined, JSON.stringify(renamed));
    assert.equal((renamed.structuredContent as { name: string }).name, 'Acme', 'only the slug changed');
  });

  it('initializes stateless with the product’s name, version, instructions and tools', async () => {
    const mcp = await open(reader);
    assert.equal(mcp.getServerVersion()?.name, 'SaaS');
    assert.equal(mcp.getServerVersion()?.version, t.system.config.version);
    assert.match(mcp.getInstructions() ?? '', /^SaaS: /);
    assert.deepEqual(mcp.getServerCapabilities()?.tools, {});
    const raw = await post(t.url, rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }), {
      authorization: `Bearer ${reader}`,
    });
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('mcp-session-id'), null, 'no session');
    assert.match(raw.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(raw.body.result.protocolVersion, '2025-06-18');
  });

  it('an OAuth token lists the tools of its scopes and calls get-account and list-organizations as the person', async () => {
    const mcp = await open(reader);
    assert.deepEqual(sorted((await mcp.listTools()).tools), ['get-account', 'get-organization', 'get-usage-report', 'list-members', 'list-organizations']);
    const me = await mcp.callTool({ name: 'get-account', arguments: {} });
    assert.equal((me.structuredContent as { id: string }).id, person.id);
    const orgs = await mcp.callTool({ name: 'list-organizations' });
    const names = (orgs.structuredContent as { organizations: Array<{ id: string; role: string }> }).organizations;
    assert.equal(names.find((o) => o.id === orgId)?.role, 'member');
    assert.equal(errorOf(await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': otherOrgId } })).type, 'not-found');
  });

  it('a member below the route’s role gets the route’s forbidden', async () => {
    const writer = await mcpToken(t, config, person.token, 'orgs:read orgs:write');
    const mcp = await open(writer);
    const refused = errorOf(await mcp.callTool({ name: 'rename-organization', arguments: { 'organization-id': orgId, name: 'Mine now' } }));
    assert.equal(refused.type, 'forbidden');
    assert.equal((await as(t, owner, 'GET', `/api/orgs/${orgId}`)).body.name, 'Acme', 'nothing changed');
  });

  it('create-organization with orgs:write makes it, owned by the person; without, HTTP 403 asks the scope (step-up)', async () => {
    const writer = await mcpToken(t, config, person.token, 'orgs:read orgs:write');
    const made = await (await open(writer)).callTool({ name: 'create-organization', arguments: { name: 'Globex' } });
    assert.equal(made.isError, undefined, JSON.stringify(made));
    assert.equal((made.structuredContent as { name: string; role: string }).role, 'owner');
    const audit = await t.system.database.db
      .selectFrom('audit_entry')
      .select('action')
      .where('organization_id', '=', (made.structuredContent as { id: string }).id)
      .execute();
    assert.ok(
      audit.some((e) => e.action === 'org.created'),
      'the route’s own audit entry',
    );

    const raw = await post(t.url, rpc('tools/call', { name: 'create-organization', arguments: { name: 'Initrode' } }), {
      authorization: `Bearer ${writer}`,
      'user-agent': 'TestAssistant/2.0',
    });
    const initrode = raw.body.result.structuredContent.id as string;
    const origin = await t.system.database.db
      .selectFrom('audit_entry')
      .select(['user_agent', 'ip'])
      .where('organization_id', '=', initrode)
      .executeTakeFirstOrThrow();
    assert.deepEqual(origin, { user_agent: 'TestAssistant/2.0', ip: '127.0.0.1' }, 'the audit entry names the MCP client, not an in-process request');

    const stepUp = await post(t.url, rpc('tools/call', { name: 'create-organization', arguments: { name: 'Nope' } }), { authorization: `Bearer ${reader}` });
    assert.equal(stepUp.status, 403);
    assert.equal(
      stepUp.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="account:read orgs:read orgs:write", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const names = (await as(t, person, 'GET', '/api/orgs')).body.organizations.map((o: { name: string }) => o.name);
    assert.ok(!names.includes('Nope'));
  });

  it('bad arguments are a result with isError naming each field as the API does', async () => {
    const writer = await mcpToken(t, config, person.token, 'orgs:read orgs:write');
    const mcp = await open(writer);
    const body = errorOf(await mcp.callTool({ name: 'create-organization', arguments: { name: 5, colour: 'red' } }));
    assert.equal(body.type, 'request-coercion');
    const paths = body.errors.map((e: { path: string }) => e.path);
    assert.ok(paths.includes('/name'), JSON.stringify(body));
    assert.ok(paths.includes('/colour'), JSON.stringify(body));
    const missing = errorOf(await mcp.callTool({ name: 'get-organization', arguments: {} }));
    assert.deepEqual(missing.errors, [{ path: '/organization-id', message: 'is required' }]);
    const notUuid = errorOf(await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': 'nope' } }));
    assert.equal(notUuid.type, 'request-coercion');
    assert.equal(notUuid.errors[0].path, '/organization-id', JSON.stringify(notUuid));
    const extra = errorOf(await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': orgId, limit: 3 } }));
    assert.deepEqual(extra.errors, [{ path: '/limit', message: 'is not an argument of this tool' }]);
  });

  it('an unknown tool or a malformed message is a JSON-RPC error, never a 500', async () => {
    const mcp = await open(reader);
    await assert.rejects(mcp.callTool({ name: 'drop-database' }), (err: { code?: number }) => err.code === -32602);
    const malformed = await post(t.url, '{"jsonrpc": "2.0", "id": 1, "method": ', { authorization: `Bearer ${reader}` });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, -32700);
    const notRpc = await post(t.url, { hello: 'world' }, { authorization: `Bearer ${reader}` });
    assert.equal(notRpc.status, 400);
    assert.equal(notRpc.body.jsonrpc, '2.0');
  });

  it('logs each request’s methods and tools, never an argument', async () => {
    const writer = await mcpToken(t, config, person.token, 'orgs:read orgs:write');
    await (await open(writer)).callTool({ name: 'create-organization', arguments: { name: 'Secret-Codename-7731' } });
    const entries = (await t.logEntries()).filter((e) => String((e as { id?: string }).id ?? '').startsWith('mcp/'));
    assert.ok(entries.some((e) => JSON.stringify(e).includes('"create-organization"')));
    assert.ok(!entries.some((e) => JSON.stringify(e).includes('Secret-Codename-7731')));
    // the route's own entry is in a context of its own, naming the MCP request it served
    const routeEntry = (await t.logEntries()).find((e) => (e as { id?: string }).id === 'api-call/response' && JSON.stringify(e).includes('mcp-req-id'));
    assert.ok(routeEntry, 'the route logged its own api-call/response');
  });
});
