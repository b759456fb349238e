/**
 * The OAuth provider on two instances of one PostgreSQL database (docs/oauth.md): a connected app
 * revoked on one instance is refused on the other within a second, an app's deletion ends its
 * grants, a key rotation while tokens are alive reaches the other instance and signs later, and
 * dynamic registration (on here) takes public clients only. Also: a development server without
 * JWT_SECRET keeps its sessions across a restart (its signing keys are in the database).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { authModule, type AuthServices } from '../../src/auth/module.js';
import { loadConfig } from '../../src/config.js';
import { buildSystem } from '../../src/system.js';
import { makeClient } from '../support/http.js';
import { logIn, signUp, signUpVerified } from '../support/auth.js';
import type { TestClient } from '../support/http.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { authorize, bearer, createApp, newBrowser, REDIRECT } from './support.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

/** Milliseconds until `token` is refused on `on` (bounded: fails after 3 s). */
async function untilRefused(on: TestClient, token: string, path = '/api/account/me'): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await on('GET', path, { headers: bearer(token) });
    if (res.status === 401) return Date.now() - started;
    assert.ok(Date.now() - started < 3000, 'refused within 3 s');
    await sleep(20);
  }
}

describe('OAuth on two instances of one PostgreSQL', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let drop: () => Promise<void>;
  let owner: { token: string; orgId: string };
  let config: client.Configuration;
  let app: { id: string; 'client-id': string };

  before(async () => {
    let url: string;
    ({ url, drop } = await postgres!.create());
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const port = await freePort();
    // one public address for both (a load balancer's): the tokens' issuer and audience
    const env = { APP_URL: `http://127.0.0.1:${port}`, OAUTH_DYNAMIC_REGISTRATION: 'on' };
    a = await startSystem(shared, { ...env, PORT: String(port) });
    b = await startSystem(shared, env);
    const account = await signUpVerified(a);
    const token = (await logIn(a.client, account.email)).body['access-token'] as string;
    const org = await a.client('POST', '/api/orgs', { headers: bearer(token), body: { name: 'Initech' } });
    owner = { token, orgId: org.body.id };
    app = await createApp(a, token, owner.orgId, { confidential: false, scopes: ['openid', 'offline_access', 'account:read'] });
    config = await client.discovery(new URL(`${a.url}/oauth`), app['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

  it('a connected app revoked on one instance is refused on the other within a second', async () => {
    const { tokens } = await authorize(a, config, newBrowser(), owner.token, { scope: 'openid account:read' });
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200, 'verified (and cached) on B');
    const list = await b.client('GET', '/api/account/connected-apps', { headers: bearer(owner.token) });
    const grant = list.body['connected-apps'].find((c: { 'client-id': string }) => c['client-id'] === app['client-id']);
    assert.equal((await a.client('DELETE', `/api/account/connected-apps/${grant.id}`, { headers: bearer(owner.token) })).status, 204);
    assert.ok((await untilRefused(b.client, tokens.access_token)) < 1000);
  });

  it('ends the connected apps with every session of the account (a password reset, a lock, a deletion)', async () => {
    const person = await signUpVerified(a);
    const token = (await logIn(a.client, person.email)).body['access-token'] as string;
    const { tokens } = await authorize(a, config, newBrowser(), token, { scope: 'openid account:read' });
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200);
    await a.system.services<AuthServices>(authModule).refreshTokens.revokeAllForAccount(person.id);
    assert.ok((await untilRefused(b.client, tokens.access_token)) < 1000);
  });

  it('rotates keys while tokens are alive: the other instance publishes the new key at once, the old tokens stay valid', async () => {
    const { tokens } = await authorize(a, config, newBrowser(), owner.token, { scope: 'openid offline_access account:read', prompt: 'consent' });
    const oldKid = decodeProtectedHeader(tokens.access_token).kid;
    const kids = await a.system.services<AuthServices>(authModule).signingKeys.rotate();
    const started = Date.now();
    for (;;) {
      const published = (await b.client('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
      if (kids.every((kid) => published.includes(kid))) break;
      assert.ok(Date.now() - started < 5000, 'published by the other instance within 5 s');
      await sleep(50);
    }
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.equal(decodeProtectedHeader(refreshed.access_token).kid, oldKid, 'the new key signs later');
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(refreshed.access_token) })).status, 200);
  });

  it("deleting an app ends its grants on every instance, with the organization's audit entry", async () => {
    const other = await createApp(a, owner.token, owner.orgId, { confidential: false, scopes: ['openid', 'account:read'], name: 'Doomed' });
    const otherConfig = await client.discovery(new URL(`${a.url}/oauth`), other['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const { tokens } = await authorize(a, otherConfig, newBrowser(), owner.token, { scope: 'openid account:read' });
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200);
    assert.equal((await b.client('DELETE', `/api/orgs/${owner.orgId}/oauth-apps/${other.id}`, { headers: bearer(owner.token) })).status, 204);
    await untilRefused(a.client, tokens.access_token);
    const actions = await a.system.database.db.selectFrom('audit_entry').select(['action', 'details']).where('organization_id', '=', owner.orgId).execute();
    assert.ok(actions.some((e) => e.action === 'oauth-app.deleted'));
    const revoked = await a.system.database.db.selectFrom('audit_entry').select('details').where('action', '=', 'oauth-grant.revoked').execute();
    assert.ok(revoked.some((e) => (e.details as { reason?: string }).reason === 'app-deleted'));
  });

  it('registers public clients dynamically (MCP), refusing confidential ones and scopes beyond the allowed set', async () => {
    const registered = await client.dynamicClientRegistration(
      new URL(`${a.url}/oauth`),
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'An MCP client', scope: 'openid account:read' },
      client.None(),
      { execute: [client.allowInsecureRequests] },
    );
    const { tokens } = await authorize(a, registered, newBrowser(), owner.token, { scope: 'openid account:read' });
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 200);
    const list = await a.client('GET', '/api/account/connected-apps', { headers: bearer(owner.token) });
    const entry = list.body['connected-apps'].find((c: { name: string }) => c.name === 'An MCP client');
    assert.equal(entry.organization, null);
    const register = (body: Record<string, unknown>) =>
      fetch(`${a.url}/oauth/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT], ...body }),
      });
    const confidential = await register({ token_endpoint_auth_method: 'client_secret_basic' });
    assert.equal(confidential.status, 400);
    assert.equal(((await confidential.json()) as { error: string }).error, 'invalid_client_metadata');
    const beyond = await register({ token_endpoint_auth_method: 'none', scope: 'openid billing:write' });
    assert.equal(beyond.status, 400);
    assert.equal(((await beyond.json()) as { error: string }).error, 'invalid_client_metadata');
  });
});

// the signing keys live in the database: a restart with a new random secret still verifies the old tokens
describe('A development server without JWT_SECRET', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  it('keeps its sessions across a restart: the keys are in the database', async () => {
    const { url: databaseUrl, drop } = await postgres!.create();
    const env = { APP_ENV: 'dev', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, LOG_CONSOLE: 'off', SIGNUP_LIMIT_ADDRESS: '0' };
    try {
      const first = await buildSystem(loadConfig(env));
      let token: string;
      try {
        const client = makeClient(await first.listen());
        const { email } = await signUp(client);
        token = (await logIn(client, email)).body['access-token'];
      } finally {
        await first.stop();
      }
      const second = await buildSystem(loadConfig(env));
      try {
        const client = makeClient(await second.listen());
        assert.equal((await client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } })).status, 200);
      } finally {
        await second.stop();
      }
    } finally {
      await drop();
    }
  });
});
