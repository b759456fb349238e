/**
 * Sample items as MCP tools (docs/sample-items.md, docs/mcp.md) through the official SDK client on
 * `APP_URL/mcp`, with an OAuth token issued for it: the five tools list, create, get, update and
 * delete, each call running its route (its audit entries, what the API then answers); bad
 * arguments are a result with `isError` naming each bad field, and nothing is stored; the
 * person's role still decides, and a token with the read scope alone sees the two reads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as oauth from 'openid-client';
import { hasRole } from '../../src/http/routes.js';
import { SAMPLE_ITEM_FIELDS } from '../../src/sample-items/fields.js';
import { SAMPLE_ITEM_WRITE_ROLE } from '../../src/sample-items/routes.js';
import type { FieldSpecs } from '../../src/shared/resource-fields.js';
import { connect, errorOf, mcpApp, mcpToken } from '../mcp/support.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { answeredFields, badValue, inputWithFiles, withoutLinks } from '../support/resources.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

// every field spec as the general type: a comparison with a type the resource lacks still type-checks
const FIELDS: FieldSpecs = SAMPLE_ITEM_FIELDS;
const READ = 'sample-items:read';
const WRITE = 'sample-items:write';
const TOOLS = ['create-sample-item', 'delete-sample-item', 'get-sample-item', 'list-sample-items', 'update-sample-item'];

type Item = Record<string, unknown> & { id: string };
const namesOf = (tools: Array<{ name: string }>) => tools.map((tool) => tool.name).sort();
// (a file's links are signed when answered: never twice the same)
const without = (item: Record<string, unknown>) => ({ ...withoutLinks(item), id: undefined, 'created-at': undefined, 'updated-at': undefined });

describe('sample items as MCP tools', () => {
  let t: TestSystem;
  let owner: TestAccount;
  let member: TestAccount;
  let orgId: string;
  let config: oauth.Configuration;
  const clients: Client[] = [];
  /** the SDK client, with a token for `APP_URL/mcp` that `who` allowed with `scope` */
  const open = async (who: TestAccount, scope: string) => {
    const mcp = await connect(t.url, await mcpToken(t, config, who.token, scope));
    clients.push(mcp);
    return mcp;
  };
  /** item `n`'s arguments (a file field's: the id of a new upload, by the owner over HTTP: no bytes go through MCP) */
  const inputOf = (n: number) => inputWithFiles(t, owner, orgId, 'sample-items', FIELDS, n);
  const count = async () => (await as(t, owner, 'GET', `/api/orgs/${orgId}/sample-items?limit=100`)).body['sample-items'].length as number;

  before(async () => {
    // the OAuth issuer and the MCP resource are APP_URL's: the system listens where APP_URL says
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
    owner = await account(t);
    member = await account(t);
    orgId = await createOrg(t, owner);
    await addMember(t, orgId, owner, member, 'member');
    config = await mcpApp(t, owner.token, orgId, [READ, WRITE]);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
  });

  it('lists, creates, gets, updates and deletes through its five tools, each call running its route', async () => {
    const mcp = await open(owner, `${READ} ${WRITE}`);
    const { tools } = await mcp.listTools();
    assert.deepEqual(namesOf(tools), TOOLS);
    const tool = (name: string) => tools.find((x) => x.name === name)!;
    assert.equal(tool('list-sample-items').annotations?.readOnlyHint, true);
    assert.equal(tool('delete-sample-item').annotations?.destructiveHint, true);
    assert.deepEqual([...(tool('get-sample-item').inputSchema.required ?? [])].sort(), ['itemId', 'organization-id']);
    assert.deepEqual(Object.keys(tool('create-sample-item').inputSchema.properties ?? {}).sort(), ['organization-id', ...Object.keys(FIELDS)].sort());

    const input = await inputOf(1);
    const created = await mcp.callTool({ name: 'create-sample-item', arguments: { 'organization-id': orgId, ...input } });
    assert.equal(created.isError, undefined, JSON.stringify(created));
    const item = created.structuredContent as Item;
    assert.deepEqual(without(item), without(answeredFields(FIELDS, input)));
    const ids = { 'organization-id': orgId, itemId: item.id };
    assert.deepEqual(withoutLinks((await mcp.callTool({ name: 'get-sample-item', arguments: ids })).structuredContent), withoutLinks(item));
    const listed = (await mcp.callTool({ name: 'list-sample-items', arguments: { 'organization-id': orgId, limit: 100 } })).structuredContent as {
      'sample-items': Item[];
    };
    assert.deepEqual(withoutLinks(listed['sample-items'].find((i) => i.id === item.id)), withoutLinks(item));

    // one field: a change is never empty, even when every field is optional
    const [field] = Object.keys(FIELDS);
    const changes = { [field]: (await inputOf(2))[field] };
    const updated = await mcp.callTool({ name: 'update-sample-item', arguments: { ...ids, ...changes } });
    assert.equal(updated.isError, undefined, JSON.stringify(updated));
    assert.deepEqual(withoutLinks((updated.structuredContent as Item)[field]), answeredFields(FIELDS, changes)[field]);
    assert.deepEqual(
      withoutLinks((await as(t, owner, 'GET', `/api/orgs/${orgId}/sample-items/${item.id}`)).body),
      withoutLinks(updated.structuredContent),
      'the API answers what the tool did',
    );

    const deleted = await mcp.callTool({ name: 'delete-sample-item', arguments: ids });
    assert.equal(deleted.isError, undefined, JSON.stringify(deleted));
    assert.equal(errorOf(await mcp.callTool({ name: 'get-sample-item', arguments: ids })).type, 'not-found');
    assert.equal(errorOf(await mcp.callTool({ name: 'delete-sample-item', arguments: ids })).type, 'not-found');

    const log = await as(t, owner, 'GET', `/api/orgs/${orgId}/audit-log?limit=100`);
    const actions = (log.body.entries as Array<{ action: string; target: { id: string } | null }>).filter((e) => e.target?.id === item.id).map((e) => e.action);
    assert.deepEqual(actions.sort(), ['sample-item.created', 'sample-item.deleted', 'sample-item.updated'], "the route's own audit entries");
  });

  it('refuses bad arguments with a result with isError naming each bad field, storing nothing', async () => {
    const mcp = await open(owner, `${READ} ${WRITE}`);
    const before = await count();
    const bad = Object.fromEntries(Object.entries(FIELDS).map(([name, spec]) => [name, badValue(spec)]));
    const refused = errorOf(await mcp.callTool({ name: 'create-sample-item', arguments: { 'organization-id': orgId, ...bad } }));
    assert.equal(refused.type, 'request-coercion');
    const paths = new Set((refused.errors as Array<{ path: string }>).map((e) => e.path));
    for (const name of Object.keys(FIELDS)) assert.ok(paths.has(`/${name}`), `an error for /${name}: ${JSON.stringify(refused)}`);
    const notAnId = errorOf(await mcp.callTool({ name: 'get-sample-item', arguments: { 'organization-id': orgId, itemId: 'not-an-id' } }));
    assert.equal(notAnId.type, 'request-coercion');
    assert.deepEqual(
      (notAnId.errors as Array<{ path: string }>).map((e) => e.path),
      ['/itemId'],
      JSON.stringify(notAnId),
    );
    const missing = errorOf(await mcp.callTool({ name: 'update-sample-item', arguments: { 'organization-id': orgId } }));
    assert.deepEqual(missing.errors, [{ path: '/itemId', message: 'is required' }]);
    assert.equal(await count(), before);
  });

  it("acts with the person's role; a token with the read scope alone lists and calls the reads only", async () => {
    const writer = await open(member, `${READ} ${WRITE}`);
    const made = await writer.callTool({ name: 'create-sample-item', arguments: { 'organization-id': orgId, ...(await inputOf(3)) } });
    if (hasRole('member', SAMPLE_ITEM_WRITE_ROLE)) assert.equal(made.isError, undefined, JSON.stringify(made));
    else assert.equal(errorOf(made).type, 'forbidden', 'a member below the write role');

    const reader = await open(member, READ);
    assert.deepEqual(namesOf((await reader.listTools()).tools), ['get-sample-item', 'list-sample-items']);
    const page = await reader.callTool({ name: 'list-sample-items', arguments: { 'organization-id': orgId } });
    assert.equal(page.isError, undefined, JSON.stringify(page));
    // a write with the read scope alone: HTTP 403 on the MCP request itself (the step-up), which the SDK client throws
    await assert.rejects(
      reader.callTool({ name: 'create-sample-item', arguments: { 'organization-id': orgId, ...(await inputOf(4)) } }),
      (err: { code?: number }) => err.code === 403,
    );
  });
});
