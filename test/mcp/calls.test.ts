/**
 * What each tool call leaves and spends (docs/mcp.md, "Limits, audit entries, metrics"): the audit
 * entry `mcp.tool-called` in the account's log (and its organization's, for an organization's tool
 * it is a member of; never a stranger's), an API key's in its organization's log with the key as
 * actor, never an argument; the metric by tool and outcome; MCP_LIMIT per grant or key, then HTTP
 * 429 with Retry-After.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as client from 'openid-client';
import { metricValue, scrape } from '../observability/scrape.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { connect, mcpApp, mcpToken, post, rpc } from './support.js';

describe('MCP tool calls: audit entries, metrics, MCP_LIMIT (pglite)', () => {
  let t: TestSystem;
  let owner: TestAccount;
  let person: TestAccount;
  let orgId: string;
  let strangersOrgId: string;
  let config: client.Configuration;
  const clients: Client[] = [];
  const open = async (credential: string) => {
    const c = await connect(t.url, credential);
    clients.push(c);
    return c;
  };
  const entries = (organizationId: string) =>
    t.system.database.db
      .selectFrom('audit_entry')
      .select(['account_id', 'actor_account_id', 'actor_api_key_id', 'target_id', 'details', 'user_agent'])
      .where('action', '=', 'mcp.tool-called')
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .execute();
  const personalOrg = async (who: TestAccount) =>
    (await t.system.database.db.selectFrom('organization').select('id').where('personal_account_id', '=', who.id).executeTakeFirstOrThrow()).id;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], {
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      METRICS_PORT: String(await freePort()),
      MCP_LIMIT: '4/60',
    });
    owner = await account(t);
    person = await account(t);
    orgId = await createOrg(t, owner, 'Acme');
    strangersOrgId = await createOrg(t, await account(t), 'Elsewhere');
    await addMember(t, orgId, owner, person, 'member');
    config = await mcpApp(t, owner.token, orgId, ['account:read', 'orgs:read']);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
  });

  it("a person's calls are in their log, an organization's tool in its log too, a stranger organization's never; no argument anywhere", async () => {
    const mcp = await open(await mcpToken(t, config, person.token, 'account:read orgs:read'));
    const before = await scrape(t.system.metricsUrl!);
    assert.equal((await mcp.callTool({ name: 'get-account', arguments: {} })).isError, undefined);
    assert.equal((await mcp.callTool({ name: 'list-members', arguments: { 'organization-id': orgId } })).isError, undefined);
    assert.equal((await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': strangersOrgId } })).isError, true);
    const own = (await entries(await personalOrg(person))).map((e) => ({ tool: e.target_id, ...(e.details as object) }));
    assert.deepEqual(
      own.map(({ tool, outcome }: any) => [tool, outcome]),
      [
        ['get-account', 'ok'],
        ['list-members', 'ok'],
        ['get-organization', 'not-found'],
      ],
    );
    for (const entry of own as any[]) {
      assert.equal(entry['client-id'], (config.clientMetadata() as { client_id: string }).client_id);
      assert.equal(typeof entry.ms, 'number');
      assert.deepEqual(Object.keys(entry).sort(), ['client-id', 'ms', 'outcome', 'tool']);
    }
    const acme = await entries(orgId);
    assert.deepEqual(
      acme.map((e) => [e.target_id, e.actor_account_id, (e.details as { outcome: string }).outcome]),
      [['list-members', person.id, 'ok']],
    );
    assert.deepEqual(await entries(strangersOrgId), [], "a stranger's refused call stays out of the organization's log");
    const after = await scrape(t.system.metricsUrl!);
    const delta = (tool: string, outcome: string) =>
      metricValue(after, 'saas_mcp_tool_calls_total', { tool, outcome }) - metricValue(before, 'saas_mcp_tool_calls_total', { tool, outcome });
    assert.equal(delta('get-account', 'ok'), 1);
    assert.equal(delta('list-members', 'ok'), 1);
    assert.equal(delta('get-organization', 'not-found'), 1);
    const requestLines = (await t.logText()).split('\n').filter((line) => line.includes('"mcp/request"'));
    assert.ok(requestLines.length >= 3);
    for (const line of requestLines) assert.ok(!line.includes(strangersOrgId) && !line.includes(orgId), `no argument in ${line}`);
    // each call's route writes its own entry, timed from its own start (an in-process request)
    const routeTimes = (await t.logEntries())
      .map((e) => JSON.stringify(e))
      .filter((e) => e.includes('"api-call/response"') && e.includes('mcp-req-id'))
      .map((e) => Number(/"saas\.logging\/ms":([\d.]+)/.exec(e)?.[1]));
    assert.ok(routeTimes.length >= 3);
    assert.ok(
      routeTimes.every((ms) => ms > 0),
      `the routes' times: ${routeTimes.join(', ')}`,
    );
  });

  it("an API key's calls are in its organization's log, the key the actor", async () => {
    const key = await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'agent', role: 'member' });
    assert.equal(key.status, 201, key.text);
    const mcp = await open(key.body.key);
    assert.equal((await mcp.callTool({ name: 'get-organization', arguments: { 'organization-id': orgId } })).isError, undefined);
    const byKey = (await entries(orgId)).filter((e) => e.actor_api_key_id === key.body.id);
    assert.equal(byKey.length, 1);
    assert.deepEqual(byKey[0]!.details, { tool: 'get-organization', outcome: 'ok', ms: (byKey[0]!.details as { ms: number }).ms });
  });

  it('past MCP_LIMIT a grant is HTTP 429 with Retry-After; another grant is not', async () => {
    const fresh = await account(t);
    const token = await mcpToken(t, config, fresh.token, 'account:read');
    const call = () => post(t.url, rpc('tools/call', { name: 'get-account', arguments: {} }), { authorization: `Bearer ${token}` });
    for (let i = 0; i < 4; i++) assert.equal((await call()).status, 200);
    const refused = await call();
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(refused.body.error.message, /MCP_LIMIT/);
    // a refused request ran nothing and wrote no audit entry
    assert.equal((await entries(await personalOrg(fresh))).length, 4);
    // a batch is counted whole before any call runs: one past the limit runs none
    const other = await account(t);
    const batchToken = await mcpToken(t, config, other.token, 'account:read');
    const batch = Array.from({ length: 5 }, (_, i) => rpc('tools/call', { name: 'get-account', arguments: {} }, i + 1));
    const batched = await post(t.url, batch, { authorization: `Bearer ${batchToken}`, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(batched.status, 429);
    assert.deepEqual(await entries(await personalOrg(other)), [], 'no call of the refused batch ran');
    // the limit is the grant's: the owner's own grant still calls
    const owners = await mcpToken(t, config, owner.token, 'account:read');
    assert.equal((await post(t.url, rpc('tools/call', { name: 'get-account', arguments: {} }), { authorization: `Bearer ${owners}` })).status, 200);
  });
});
