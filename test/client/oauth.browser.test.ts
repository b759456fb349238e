/**
 * The OAuth provider's sign-in in a real browser (Debian's Chromium through playwright-core): an
 * app sends a signed-out visitor to the provider, which sends them to the product's own page
 * (`/authorize/<uid>`); they log in there, see the app, its organization and the scopes in words,
 * allow, and the browser lands on the app's redirect URI with a code the app redeems with its
 * PKCE verifier (openid-client); the access token works on the API. No console error over the run.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe } from 'node:test';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { PASSWORD, logIn, signUpVerified, uniqueEmail } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { bearer, createApp } from '../oauth/support.js';

const browser = browserHarness('oauth');

describe('OAuth sign-in and consent in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;
  // the app's redirect URI: a server of its own, so the browser lands on a page
  let app: Server;
  let REDIRECT = '';

  before(async () => {
    const appPort = await freePort();
    app = createServer((_req, res) => res.end('back at the app')).listen(appPort, '127.0.0.1');
    REDIRECT = `http://127.0.0.1:${appPort}/callback`;
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
    await browser.launch();
    page = await browser.openPage('page');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    app?.close();
  });

  browser.step('a visitor logs in on the consent page, allows the app, and the app gets working tokens', async () => {
    const { email } = await signUpVerified(t, uniqueEmail('oauth'));
    const token = (await logIn(t.client, email)).body['access-token'] as string;
    const org = await t.client('POST', '/api/orgs', { headers: bearer(token), body: { name: 'Globex' } });
    const registered = await createApp(t, token, org.body.id, {
      confidential: false,
      scopes: ['openid', 'email', 'account:read'],
      name: 'Globex Planner',
      redirect: REDIRECT,
    });
    const config = await client.discovery(new URL(`${t.url}/oauth`), registered['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email account:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    await page.goto(url.href);
    await page.waitForURL(/\/authorize\/[A-Za-z0-9_-]+$/);
    await page.locator('#log-in-email').fill(email);
    await page.locator('#log-in-password').fill(PASSWORD);
    await page.locator('form#log-in button[type=submit]').click();
    await page.locator('#consent-card').waitFor();
    assert.match((await page.locator('#consent-title').textContent()) ?? '', /Globex Planner/);
    assert.match((await page.locator('#consent-organization').textContent()) ?? '', /Globex/);
    assert.equal(await page.locator('#consent-scopes li').count(), 3);
    await page.locator('#consent-allow').click();
    await page.waitForURL(`${REDIRECT}**`);

    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).body.email, email);
  });
});
