/**
 * The MCP server keeps nothing between requests (docs/mcp.md): a client initialized on one instance
 * calls tools on another instance of the same PostgreSQL database, with an OAuth token the first
 * issued and an API key made on the first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { INITIALIZE, mcpApp, mcpToken, post, rpc } from './support.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

describe('MCP on two instances of one PostgreSQL', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let drop: () => Promise<void>;
  let owner: TestAccount;
  let orgId: string;
  let token: string;

  before(async () => {
    let url: string;
    ({ url, drop } = await postgres!.create());
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const port = await freePort();
    // one public address for both (a load balancer's): the tokens' issuer and audience
    const env = { APP_URL: `http://127.0.0.1:${port}` };
    a = await startSystem(shared, { ...env, PORT: String(port) });
    b = await startSystem(shared, env);
    owner = await account(a);
    orgId = await createOrg(a, owner, 'Initech');
    token = await mcpToken(a, await mcpApp(a, owner.token, orgId, ['account:read', 'orgs:read']), owner.token, 'account:read orgs:read');
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

  it('a revoked assistant is refused on both instances within a second', async () => {
    const person = await account(a);
    const revocable = await mcpToken(a, await mcpApp(a, owner.token, orgId, ['account:read']), person.token, 'account:read');
    const call = (on: TestSystem) => post(on.url, rpc('tools/call', { name: 'get-account', arguments: {} }), { authorization: `Bearer ${revocable}` });
    assert.equal((await call(a)).status, 200);
    assert.equal((await call(b)).status, 200);
    const apps = await a.client('GET', '/api/account/connected-apps', { headers: { authorization: `Bearer ${person.token}` } });
    const [assistant] = apps.body['connected-apps'];
    assert.equal(assistant.assistant, true);
    const revoked = await a.client('DELETE', `/api/account/connected-apps/${assistant.id}`, { headers: { authorization: `Bearer ${person.token}` } });
    assert.equal(revoked.status, 204, revoked.text);
    // the promise: refused everywhere within a second of the revocation (b hears it from PostgreSQL)
    const deadline = Date.now() + 1000;
    for (const on of [a, b]) {
      let status = (await call(on)).status;
      while (status !== 401 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await call(on)).status;
      }
      assert.equal(status, 401, `${on === a ? 'the instance that revoked' : 'the other instance'} still answers`);
    }
  });

  it('a client initialized on one instance calls tools on the other', async () => {
    const initialized = await post(a.url, INITIALIZE, { authorization: `Bearer ${token}` });
    assert.equal(initialized.status, 200);
    assert.equal(initialized.headers.get('mcp-session-id'), null);
    const headers = { authorization: `Bearer ${token}`, 'mcp-protocol-version': initialized.body.result.protocolVersion };
    const listed = await post(b.url, rpc('tools/list', {}, 2), headers);
    assert.equal(listed.status, 200);
    assert.ok(listed.body.result.tools.some((tool: { name: string }) => tool.name === 'get-account'));
    const called = await post(b.url, rpc('tools/call', { name: 'get-organization', arguments: { 'organization-id': orgId } }, 3), headers);
    assert.equal(called.status, 200);
    assert.equal(called.body.result.structuredContent.name, 'Initech');
  });

  it('the SDK client on one instance, then a new one on the other, with an API key', async () => {
    const key = (await as(a, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'agent', role: 'member' })).body.key as string;
    for (const on of [a, b]) {
      const mcp = new Client({ name: 'saas-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${on.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      const members = await mcp.callTool({ name: 'list-members', arguments: { 'organization-id': orgId } });
      assert.deepEqual(
        (members.structuredContent as { members: Array<{ email: string }> }).members.map((m) => m.email),
        [owner.email],
      );
      await mcp.close();
    }
  });
});
