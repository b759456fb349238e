/**
 * Audience binding (RFC 8707, docs/oauth.md "Tokens"): an access token's `aud` is the resource its
 * client asked (`APP_URL/api`, or `APP_URL/mcp` for the MCP server), the API's when none was; the
 * token works only there (the API answers one for the MCP server 401 `invalid_token`), a refresh
 * keeps the resource, and a `resource` at the token endpoint other than the authorization's is
 * `invalid_target`. The MCP side (refusing API tokens) is in test/mcp/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { logIn, signUpVerified } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { authorize, bearer, createApp, newBrowser, REDIRECT } from './support.js';

describe('OAuth audience binding on pglite', () => {
  let t: TestSystem;
  let owner: { token: string };
  let config: client.Configuration;
  let api: string;
  let mcp: string;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
    api = `${t.url}/api`;
    mcp = `${t.url}/mcp`;
    const account = await signUpVerified(t);
    const token = (await logIn(t.client, account.email)).body['access-token'] as string;
    const org = await t.client('POST', '/api/orgs', { headers: bearer(token), body: { name: 'Acme' } });
    owner = { token };
    const app = await createApp(t, token, org.body.id, { confidential: false, scopes: ['offline_access', 'account:read', 'orgs:read'] });
    config = await client.discovery(new URL(`${t.url}/oauth`), app['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(() => t?.stop());

  it('publishes each resource’s metadata (RFC 9728): the API’s and the MCP server’s', async () => {
    const mcpDoc = await t.client('GET', '/.well-known/oauth-protected-resource/mcp');
    assert.equal(mcpDoc.status, 200);
    assert.deepEqual(mcpDoc.body, {
      resource: mcp,
      authorization_servers: [`${t.url}/oauth`],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access', 'account:read', 'orgs:read', 'orgs:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'SaaS MCP server',
    });
    const apiDoc = await t.client('GET', '/.well-known/oauth-protected-resource/api');
    assert.equal(apiDoc.body.resource, api);
    assert.equal(apiDoc.body.resource_name, 'SaaS API');
  });

  it('a token asked for APP_URL/mcp carries it as aud, and the API refuses it as invalid_token', async () => {
    const { tokens } = await authorize(t, config, newBrowser(), owner.token, { scope: 'account:read', resource: mcp });
    assert.equal(decodeJwt(tokens.access_token).aud, mcp);
    const refused = await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.message, 'Access token is for another resource');
    assert.equal(refused.headers['www-authenticate'], `Bearer error="invalid_token", resource_metadata="${t.url}/.well-known/oauth-protected-resource/api"`);
  });

  it('a token asked without a resource, or for APP_URL/api, is the API’s and works there', async () => {
    for (const resource of [undefined, api]) {
      const { tokens } = await authorize(t, config, newBrowser(), owner.token, { scope: 'account:read', ...(resource ? { resource } : {}) });
      assert.equal(decodeJwt(tokens.access_token).aud, api, String(resource));
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200);
    }
  });

  it('a refresh keeps the resource of the authorization', async () => {
    const { tokens } = await authorize(t, config, newBrowser(), owner.token, { scope: 'offline_access account:read', resource: mcp, prompt: 'consent' });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.equal(decodeJwt(refreshed.access_token).aud, mcp);
  });

  it('a resource at the token endpoint other than the authorization’s is invalid_target, an unknown one too', async () => {
    await assert.rejects(
      authorize(t, config, newBrowser(), owner.token, { scope: 'account:read', resource: mcp, tokenResource: api }),
      (err: { error?: string }) => err.error === 'invalid_target',
    );
    const unknown = await authorize(t, config, newBrowser(), owner.token, { scope: 'account:read', resource: `${t.url}/other` }).catch((e) => e);
    assert.equal(unknown.error, 'invalid_target');
  });
});
