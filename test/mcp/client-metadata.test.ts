/**
 * MCP clients that the product has not reviewed (docs/mcp.md, "Who may connect"): the official SDK
 * client runs its own OAuth flow (discovery from the 401, PKCE, `resource`) once with a Client ID
 * Metadata Document served over HTTPS on loopback (its loopback redirect URI on another port) and
 * once with dynamic registration; the consent page names it unreviewed with its host; a document
 * that is too big, slow, not JSON, redirecting, naming another client_id or on a private address
 * is `invalid_client` with the reason, never a 500.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { generate } from 'selfsigned';
import { loopbackWithoutPort, MetadataDocuments } from '../../src/oauth/client-metadata.js';
import { systemResolver } from '../../src/webhooks/address-guard.js';
import { account, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { connectWithOAuth, post, rpc, TestOAuthClient } from './support.js';

// the client's callback: a loopback URI whose port the document does not name (RFC 8252 §7.3)
const CALLBACK = 'http://127.0.0.1:8766/callback';

interface Documents {
  base: string;
  ca: string;
  server: Server;
}

/** An HTTPS server on 127.0.0.1 serving metadata documents by path, with a certificate the test trusts. */
async function serveDocuments(): Promise<Documents> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const documents: Documents = { base: '', ca: pems.cert, server: undefined as never };
  const good = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: `${documents.base}${path}`,
    client_name: 'Test Assistant',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
  documents.server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const path = req.url ?? '/';
    const json = (body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (path === '/assistant.json') return json(good(path), { 'cache-control': 'max-age=600' });
    if (path === '/big.json') return json(good(path, { logo_uri: `https://127.0.0.1/${'x'.repeat(6000)}` }));
    if (path === '/other.json') return json(good('/assistant.json'));
    if (path === '/secret.json') return json(good(path, { token_endpoint_auth_method: 'client_secret_basic' }));
    if (path === '/nameless.json') return json(good(path, { client_name: undefined }));
    if (path === '/scopes.json') return json(good(path, { scope: 'openid admin:everything' }));
    if (path === '/bidi.json') return json(good(path, { client_name: 'Acme Corp Assistant \u202E' }));
    if (path === '/') return json({ ...good(''), client_id: documents.base });
    if (path === '/not-json') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html>hello</html>');
    }
    if (path === '/moved.json') {
      res.writeHead(302, { location: '/assistant.json' });
      return res.end();
    }
    if (path === '/slow.json') return void setTimeout(() => json(good(path)), 7000).unref();
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => documents.server.listen(0, '127.0.0.1', resolve));
  documents.base = `https://127.0.0.1:${(documents.server.address() as AddressInfo).port}`;
  return documents;
}

describe('MCP clients the product has not reviewed (pglite)', () => {
  let t: TestSystem;
  let person: TestAccount;
  let documents: Documents;
  const clients: Client[] = [];

  before(async () => {
    documents = await serveDocuments();
    // the server's fetch (node's https) trusts the documents' certificate as a real CA-signed one
    setDefaultCACertificates([...getCACertificates('default'), documents.ca]);
    const port = await freePort();
    t = await startSystem(testDatabases()[0], {
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      OAUTH_DYNAMIC_REGISTRATION: 'on',
      // the documents are on loopback
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    person = await account(t);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
    documents?.server.closeAllConnections();
    documents?.server.close();
  });

  const metadata = { client_name: 'Test Assistant', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };

  it('the authorization server says it takes metadata documents', async () => {
    const res = await t.client('GET', '/.well-known/oauth-authorization-server');
    assert.equal(res.status, 200);
    assert.equal(res.body.client_id_metadata_document_supported, true);
  });

  it('the SDK client signs in with a metadata document over HTTPS, shown unreviewed with its host, and calls a tool', async () => {
    const clientId = `${documents.base}/assistant.json`;
    const provider = new TestOAuthClient(t, person.token, CALLBACK, { ...metadata, token_endpoint_auth_method: 'none' }, clientId);
    const mcp = await connectWithOAuth(t.url, provider);
    clients.push(mcp);
    const [interaction] = provider.interactions;
    assert.equal(interaction.client['client-id'], clientId);
    assert.equal(interaction.client.name, 'Test Assistant');
    assert.equal(interaction.client.host, new URL(documents.base).host);
    assert.equal(interaction.client.reviewed, false);
    assert.equal(interaction.client.organization, null);
    const result = await mcp.callTool({ name: 'get-account', arguments: {} });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal((result.structuredContent as { id: string }).id, person.id);
    // the person's connected assistant, named by its document, unreviewed
    const apps = await t.client('GET', '/api/account/connected-apps', { headers: { authorization: `Bearer ${person.token}` } });
    const connected = apps.body['connected-apps'].find((a: { 'client-id': string }) => a['client-id'] === clientId);
    assert.deepEqual(
      { name: connected.name, assistant: connected.assistant, reviewed: connected.reviewed, host: connected.host },
      { name: 'Test Assistant', assistant: true, reviewed: false, host: new URL(documents.base).host },
    );
  });

  it('the SDK client signs in after registering itself, shown unreviewed without a host', async () => {
    const provider = new TestOAuthClient(t, person.token, CALLBACK, { ...metadata, client_name: 'Registered Assistant', token_endpoint_auth_method: 'none' });
    const mcp = await connectWithOAuth(t.url, provider);
    clients.push(mcp);
    assert.match(String(provider.clientInformation()?.client_id), /^mcp_/);
    const [interaction] = provider.interactions;
    assert.deepEqual(
      { name: interaction.client.name, host: interaction.client.host, reviewed: interaction.client.reviewed },
      { name: 'Registered Assistant', host: null, reviewed: false },
    );
    const { tools } = await mcp.listTools();
    assert.ok(tools.some((tool) => tool.name === 'get-account'));
    // nothing secret in the log file: the tokens, the code, the verifier
    const logs = await t.logText();
    const tokens = provider.tokens()!;
    for (const secret of [tokens.access_token, tokens.refresh_token, provider.code, provider.codeVerifier()].filter(Boolean))
      assert.ok(!logs.includes(String(secret)), 'a credential reached the log');
  });

  /** The provider's answer to an authorization request naming `clientId`: its protocol error page. */
  async function authorizationRefusal(clientId: string): Promise<string> {
    const url = new URL(`${t.url}/oauth/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'account:read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      resource: `${t.url}/mcp`,
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.match(text, /invalid_client/);
    return text;
  }

  it('a document that does not fit is invalid_client with the reason, never a 500', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/big.json', /over 5 KB/],
      ['/not-json', /not JSON/],
      ['/moved.json', /redirects/],
      ['/other.json', /client_id is not its own URL/],
      ['/secret.json', /token_endpoint_auth_method must be none/],
      ['/nameless.json', /client_name/],
      ['/scopes.json', /not admin:everything/],
      ['/missing.json', /answered 404/],
      ['/bidi.json', /control or formatting characters/],
      ['', /https with a path/],
    ];
    for (const [path, reason] of cases) assert.match(await authorizationRefusal(`${documents.base}${path}`), reason, path);
  });

  it('a document that does not answer within 5 s is refused', async () => {
    assert.match(await authorizationRefusal(`${documents.base}/slow.json`), /did not answer within 5 s/);
  });

  it('tells nothing about the network: a closed port and a host that is not TLS are both "could not be fetched"', async () => {
    const closed = await authorizationRefusal(`https://127.0.0.1:${await freePort()}/a.json`);
    const plain = await authorizationRefusal(`https://127.0.0.1:${new URL(t.url).port}/a.json`);
    for (const text of [closed, plain]) assert.match(text, /it could not be fetched/);
  });

  it('a refusal for a name that resolves too late opens no connection afterwards', async () => {
    const { createServer: createTcpServer } = await import('node:net');
    let connections = 0;
    const silent = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const slowResolver = async () => {
      await new Promise((resolve) => setTimeout(resolve, 5300));
      return [{ address: '127.0.0.1', family: 4 as const }];
    };
    const documents = new MetadataDocuments({ resolve: slowResolver, allowPrivate: true, userAgent: 'test' }, () => ['account:read']);
    const { errors } = await import('oidc-provider');
    await assert.rejects(documents.allowFetch(`https://slow-dns.test:${port}/doc.json`, errors), (err: { error_description?: string }) =>
      /did not answer within 5 s/.test(String(err.error_description)),
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    silent.close();
    assert.equal(connections, 0, 'the refused fetch connected after its refusal');
  });

  it('a document on a private address is refused unless WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = new MetadataDocuments({ resolve: systemResolver, allowPrivate: false, userAgent: 'test' }, () => ['account:read']);
    const { errors } = await import('oidc-provider');
    await assert.rejects(strict.allowFetch(`${documents.base}/assistant.json`, errors), (err: Error & { error?: string; error_description?: string }) => {
      assert.equal(err.error, 'invalid_client');
      assert.match(String(err.error_description), /not on a public address/);
      return true;
    });
  });

  it('a loopback redirect URI takes any port and nothing else', () => {
    const bare = loopbackWithoutPort('http://127.0.0.1/callback');
    assert.equal(loopbackWithoutPort('http://127.0.0.1:8766/callback'), bare);
    for (const other of [
      'http://127.0.0.1:1/x/../callback',
      'http://127.0.0.1:1\\callback',
      'http://127.1:5/callback',
      'http://0x7f000001:5/callback',
      'http://localhost.evil.com/callback',
    ])
      assert.notEqual(loopbackWithoutPort(other), bare, other);
  });

  it('the MCP server still answers 401 without a token, naming its metadata', async () => {
    const res = await post(t.url, rpc('tools/list'));
    assert.equal(res.status, 401);
    assert.match(String(res.headers.get('www-authenticate')), /resource_metadata=/);
  });
});
