/**
 * The OAuth code flow in prod (APP_ENV=prod), as one tries it on one's own machine (APP_URL http
 * on a loopback address) and as it runs behind a TLS-ending proxy (APP_URL https): the provider's
 * cookies are Secure exactly when APP_URL is https, and no authorization answers 500 for a cookie
 * (koa refuses a Secure cookie over what it takes to be plain http). Prod with an http APP_URL off
 * loopback does not start.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { loadConfig } from '../../src/config.js';
import { logIn, signUpVerified } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy.js';
import { authorize, bearer, createApp, newBrowser, REDIRECT } from './support.js';

// the proxy's certificate is self-signed: this process (the browser and the app's RP) trusts it
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

const PROD = { APP_ENV: 'prod', JWT_SECRET: TEST_JWT_SECRET, MAIL_URL: 'smtp://127.0.0.1:9', LOG_CONSOLE: 'off' };

async function codeFlow(t: TestSystem, issuer: string) {
  const account = await signUpVerified(t);
  const token = (await logIn(t.client, account.email)).body['access-token'] as string;
  const org = await t.client('POST', '/api/orgs', { headers: bearer(token), body: { name: 'Acme' } });
  assert.equal(org.status, 201, org.text);
  const app = await createApp(t, token, org.body.id, { confidential: true, scopes: ['openid', 'email', 'account:read'] });
  const config = await client.discovery(new URL(issuer), app['client-id'], { redirect_uris: [REDIRECT] }, client.ClientSecretBasic(app['client-secret']), {
    execute: issuer.startsWith('http:') ? [client.allowInsecureRequests] : [],
  });
  const browser = newBrowser();
  const result = await authorize(t, config, browser, token, { scope: 'openid email account:read' });
  assert.equal(result.error, undefined);
  const me = await t.client('GET', '/api/account/me', { headers: bearer(result.tokens.access_token) });
  assert.equal(me.status, 200, me.text);
  return browser.setCookies.filter((line) => /^(__Host-)?oauth_(interaction|session)/.test(line));
}

describe('OAuth in prod over http on loopback', () => {
  let t: TestSystem;
  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { ...PROD, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
  });
  after(() => t?.stop());

  it('completes the code flow, its cookies not Secure', async () => {
    const cookies = await codeFlow(t, `${t.url}/oauth`);
    assert.ok(cookies.length > 0, 'the provider set its cookies');
    for (const line of cookies) assert.doesNotMatch(line, /;\s*secure/i, line);
    assert.equal((await t.logEntries()).filter((e) => e.id === 'oauth/server-error').length, 0);
  });
});

describe('OAuth in prod behind a TLS-ending proxy', () => {
  let t: TestSystem;
  let proxy: TlsProxy;
  before(async () => {
    const port = await freePort();
    const proxyPort = await freePort();
    t = await startSystem(testDatabases()[0], { ...PROD, PORT: String(port), APP_URL: `https://127.0.0.1:${proxyPort}`, TRUST_PROXY: '1' });
    proxy = await startTlsProxy(t.url, proxyPort);
  });
  after(async () => {
    await proxy?.close();
    await t?.stop();
  });

  it('completes the code flow, its cookies Secure', async () => {
    const cookies = await codeFlow(t, `https://127.0.0.1:${proxy.port}/oauth`);
    assert.ok(cookies.length > 0, 'the provider set its cookies');
    for (const line of cookies) assert.match(line, /;\s*secure/i, line);
  });
});

describe('APP_URL in prod', () => {
  it('is refused at start-up when http off loopback, naming APP_URL', () => {
    assert.throws(() => loadConfig({ ...PROD, APP_URL: 'http://app.example.com' }), /APP_URL.*https/);
    assert.throws(() => loadConfig({ ...PROD, APP_URL: 'http://10.0.0.5:3000' }), /APP_URL/);
    for (const ok of ['https://app.example.com', 'http://127.0.0.1:3000', 'http://localhost:3000', 'http://[::1]:3000'])
      assert.equal(loadConfig({ ...PROD, APP_URL: ok }).appUrl, new URL(ok).origin);
    assert.equal(loadConfig({ ...PROD, APP_URL: 'https://app.example.com' }).secureCookies, true);
    assert.equal(loadConfig({ ...PROD, APP_URL: 'http://127.0.0.1:3000' }).secureCookies, false);
  });
});
