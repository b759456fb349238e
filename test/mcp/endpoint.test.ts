/**
 * `APP_URL/mcp` over HTTP (docs/mcp.md): authentication first (401 with RFC 9728's challenge,
 * `error="invalid_token"` for a failing credential: a bad token, the product's session token, an
 * OAuth token for the API), Origin checked (403), POST only (405), the supported protocol versions
 * (another: 400), and the in-process caller credential refused from outside. Also the route data
 * rules of `tool`, refused at start-up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { registerRouteGroup, route, type RouteGroup } from '../../src/http/routes.js';
import { account, createOrg, type TestAccount } from '../orgs/support.js';
import { authorize, newBrowser } from '../oauth/support.js';
import { logIn } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { INITIALIZE, mcpApp, mcpToken, post, rpc } from './support.js';

describe('MCP endpoint on pglite', () => {
  let t: TestSystem;
  let owner: TestAccount;
  let token: string;
  let apiToken: string;
  let metadata: string;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, ALLOWED_ORIGINS: 'https://console.example.com' });
    metadata = `resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`;
    owner = await account(t);
    const orgId = await createOrg(t, owner);
    const config = await mcpApp(t, owner.token, orgId, ['account:read']);
    token = await mcpToken(t, config, owner.token, 'account:read');
    apiToken = (await authorize(t, config, newBrowser(), owner.token, { scope: 'account:read' })).tokens.access_token;
  });
  after(() => t?.stop());

  it('answers 401 with the resource metadata before anything else, for every method', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await post(t.url, INITIALIZE, {}, method);
      assert.equal(res.status, 401, method);
      assert.equal(res.headers.get('www-authenticate'), `Bearer ${metadata}`, method);
    }
  });

  it('answers a failing credential 401 invalid_token: a bad token, a session token, an API token, a bad key', async () => {
    for (const [what, credential] of [
      ['garbage', 'not-a-token'],
      ['the product’s session token', owner.token],
      ['an OAuth token for the API', apiToken],
      ['an unknown API key', `sk_${'a'.repeat(40)}`],
    ]) {
      const res = await post(t.url, INITIALIZE, { authorization: `Bearer ${credential}` });
      assert.equal(res.status, 401, what);
      assert.equal(res.headers.get('www-authenticate'), `Bearer error="invalid_token", ${metadata}`, what);
      assert.equal(res.body.jsonrpc, '2.0', what);
    }
    const basic = await post(t.url, INITIALIZE, { authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(basic.headers.get('www-authenticate'), `Bearer error="invalid_token", ${metadata}`);
  });

  it('takes a present Origin only when it is APP_URL’s or in ALLOWED_ORIGINS (403 otherwise)', async () => {
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await post(t.url, INITIALIZE, { ...auth, origin: 'https://evil.example' })).status, 403);
    assert.equal((await post(t.url, INITIALIZE, { ...auth, origin: 'null' })).status, 403);
    assert.equal((await post(t.url, INITIALIZE, { ...auth, origin: t.url })).status, 200);
    assert.equal((await post(t.url, INITIALIZE, { ...auth, origin: 'https://console.example.com' })).status, 200);
    assert.equal((await post(t.url, INITIALIZE, auth)).status, 200, 'no Origin: not a browser');
  });

  it('answers a browser client on an allowed origin with CORS: a preflight without a token, then the answer readable', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const preflight = await fetch(`${t.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://console.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://console.example.com');
    assert.match(String(preflight.headers.get('access-control-allow-headers')), /authorization/);
    assert.match(String(preflight.headers.get('access-control-allow-headers')), /mcp-protocol-version/);
    const refused = await fetch(`${t.url}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    const unauthenticated = await post(t.url, INITIALIZE, { origin: 'https://console.example.com' });
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.headers.get('access-control-allow-origin'), 'https://console.example.com', 'the browser client reads the challenge');
    assert.match(String(unauthenticated.headers.get('access-control-expose-headers')), /www-authenticate/);
    assert.equal(
      (await post(t.url, INITIALIZE, { ...auth, origin: 'https://console.example.com' })).headers.get('access-control-allow-origin'),
      'https://console.example.com',
    );
  });

  it('is POST only: GET and DELETE are 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await post(t.url, undefined, { authorization: `Bearer ${token}` }, method);
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
    }
  });

  it('speaks 2025-11-25, 2025-06-18 and 2025-03-26: another MCP-Protocol-Version is 400; an initialize asking another gets the latest', async () => {
    const auth = { authorization: `Bearer ${token}` };
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26'])
      assert.equal((await post(t.url, rpc('tools/list'), { ...auth, 'mcp-protocol-version': version })).status, 200, version);
    for (const version of ['2024-11-05', 'nonsense']) {
      const res = await post(t.url, rpc('tools/list'), { ...auth, 'mcp-protocol-version': version });
      assert.equal(res.status, 400, version);
      assert.match(res.body.error.message, /Unsupported protocol version/);
    }
    const old = await post(t.url, rpc('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } }), auth);
    assert.equal(old.body.result.protocolVersion, '2025-11-25');
  });

  it("refuses in the caller's language: the request's before authentication, then the account's", async () => {
    const anonymous = await post(t.url, INITIALIZE, { 'accept-language': 'de' });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.message, 'Authentifizierung erforderlich');
    const spanish = await account(t);
    assert.equal((await t.client('PATCH', '/api/account/me', { headers: { authorization: `Bearer ${spanish.token}` }, body: { locale: 'es' } })).status, 200);
    const session = (await logIn(t.client, spanish.email)).body['access-token'];
    const orgId = await createOrg(t, spanish);
    const config = await mcpApp(t, session, orgId, ['account:read']);
    const theirs = await mcpToken(t, config, session, 'account:read');
    // the account's language wins over the request's
    const auth = { authorization: `Bearer ${theirs}`, 'accept-language': 'de' };
    const get = await post(t.url, undefined, auth, 'GET');
    assert.equal(get.status, 405);
    assert.equal(get.body.error.message, 'Método no permitido: el servidor MCP solo acepta POST (sin estado)');
    const unknown = await post(t.url, rpc('tools/call', { name: 'no-such-tool', arguments: {} }), auth);
    assert.match(JSON.stringify(unknown.body), /Herramienta desconocida: no-such-tool/);
  });

  it('answers with the API’s security headers', async () => {
    const res = await post(t.url, INITIALIZE, { authorization: `Bearer ${token}` });
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('refuses a revoked grant’s token at once (the connected app revoked)', async () => {
    const config = await mcpApp(t, owner.token, await createOrg(t, owner, 'Revokers'), ['account:read']);
    const doomed = await mcpToken(t, config, owner.token, 'account:read');
    assert.equal((await post(t.url, INITIALIZE, { authorization: `Bearer ${doomed}` })).status, 200);
    const apps = await t.client('GET', '/api/account/connected-apps', { headers: { authorization: `Bearer ${owner.token}` } });
    const grant = apps.body['connected-apps'].find((c: { 'client-id': string }) => c['client-id'] === config.clientMetadata().client_id);
    assert.equal((await t.client('DELETE', `/api/account/connected-apps/${grant.id}`, { headers: { authorization: `Bearer ${owner.token}` } })).status, 204);
    const refused = await post(t.url, INITIALIZE, { authorization: `Bearer ${doomed}` });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), `Bearer error="invalid_token", ${metadata}`);
  });

  it('never takes the in-process caller credential from outside', async () => {
    for (const path of ['/api/account/me', '/api/orgs']) {
      const res = await t.client('GET', path, { headers: { authorization: `Bearer ipc_${'A'.repeat(43)}` } });
      assert.equal(res.status, 401, path);
    }
  });
});

describe('route data tool', () => {
  const group = (extra: Record<string, unknown>): RouteGroup => ({
    prefix: '/api/things',
    auth: 'required',
    routes: [
      route({
        method: 'GET',
        path: '/',
        summary: 'Things',
        schemas: { response: { 200: Type.Object({}) } },
        handler: () => ({}),
        ...extra,
      }),
    ],
  });
  const tool = { name: 'list-things', title: 'List things', description: 'The things.' };

  it('is refused at start-up on a route without scopes, with a bad name, without words', () => {
    assert.throws(() => registerRouteGroup(Fastify(), group({ tool })), /tool list-things on a route without scopes/);
    assert.throws(() => registerRouteGroup(Fastify(), group({ tool: { ...tool, name: 'List Things' }, scopes: ['things:read'] })), /must be lower-case words/);
    assert.throws(
      () => registerRouteGroup(Fastify(), group({ tool: { ...tool, description: '' }, scopes: ['things:read'] })),
      /needs a title and a description/,
    );
    // an agent's token never reaches these, so neither does a tool
    const body = Type.Object({ password: Type.Optional(Type.String()) });
    const reauth = { method: 'POST', tool, scopes: ['things:write'], reauth: true, schemas: { body, response: { 200: Type.Object({}) } } };
    assert.throws(() => registerRouteGroup(Fastify(), group(reauth)), /re-authentication/);
    assert.throws(() => registerRouteGroup(Fastify(), group({ tool, scopes: ['things:read'], impersonation: 'allowed' })), /impersonation/);
    assert.doesNotThrow(() => registerRouteGroup(Fastify(), group({ tool, scopes: ['things:read'] })));
  });
});
