/**
 * AI assistants in a real browser (Debian's Chromium through playwright-core; docs/mcp.md,
 * "Connecting an assistant"): three assistants connect to `APP_URL/mcp` through the consent
 * page, each allowed there by the signed-in person: an organization's app (named with its
 * organization, no warning), a dynamically registered client and a Client ID Metadata Document's
 * (each named by its own name, the latter with its host, under the warning that the product has
 * not reviewed it). The AI assistants page then shows the server's URL and copies it (and the
 * configuration files with it), lists the three (an app connected for the API alone is not one)
 * with their scopes in words, passes axe-core (light and dark, as the warning does), and revokes them after a confirmation: each
 * revoked token is refused at /mcp (401), and the empty state shows. No console error or failing
 * request over the run.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import * as oauthClient from 'openid-client';
import type { Page } from 'playwright-core';
import { generate } from 'selfsigned';
import { SCOPE_WORDS } from '../../src/shared/oauth-scopes.js';
import { INITIALIZE, post } from '../mcp/support.js';
import { authorize, createApp, newBrowser, REDIRECT } from '../oauth/support.js';
import { account, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { axeViolations, browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const browser = browserHarness('assistants');

/** An https server on 127.0.0.1 with a self-signed certificate that this process trusts from now on: it serves `documents` by path. */
async function metadataDocumentHost(documents: Map<string, (origin: string) => unknown>) {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  // the server fetches metadata documents in this process, with Node's default certificates
  setDefaultCACertificates([...getCACertificates('default'), pems.cert]);
  const server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const document = documents.get(req.url ?? '');
    res.writeHead(document ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(JSON.stringify(document ? document(origin) : { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const closeServer = (server: Server | undefined) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('AI assistants in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let owner: TestAccount;
  let page: Page;
  let landing: Server;
  let documents: Awaited<ReturnType<typeof metadataDocumentHost>>;
  /** the assistants' redirect URI: a page of their own, so the browser lands somewhere after Allow */
  let redirect = '';
  const orgName = 'Acme Rockets';
  let copilotClientId = '';
  /** each assistant's access token for /mcp, by its name */
  const tokens = new Map<string, string>();

  before(async () => {
    const appPort = await freePort();
    redirect = `http://127.0.0.1:${appPort}/callback`;
    landing = createServer((_req, res) => res.end('back at the assistant')).listen(appPort, '127.0.0.1');
    documents = await metadataDocumentHost(
      new Map([
        [
          '/assistant.json',
          (origin) => ({
            client_id: `${origin}/assistant.json`,
            client_name: 'Orbit Assistant',
            redirect_uris: [redirect],
            token_endpoint_auth_method: 'none',
          }),
        ],
      ]),
    );
    const port = await freePort();
    t = await startSystem(testDatabases()[0], {
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      PUBLIC_DIR,
      PRODUCT_NAME: 'Rocketship',
      OAUTH_DYNAMIC_REGISTRATION: 'on',
      // the metadata document is served on 127.0.0.1
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    owner = await account(t);
    const orgId = await createOrg(t, owner, orgName);
    // an app connected for the API only: a connected app, not an assistant
    const crm = await createApp(t, owner.token, orgId, { confidential: false, scopes: ['openid', 'account:read'], name: 'Partner CRM' });
    const crmConfig = await oauthClient.discovery(new URL(`${t.url}/oauth`), crm['client-id'], { redirect_uris: [REDIRECT] }, oauthClient.None(), {
      execute: [oauthClient.allowInsecureRequests],
    });
    await authorize(t, crmConfig, newBrowser(), owner.token, { scope: 'openid account:read' });
    // the organization's assistant, registered by its admin
    copilotClientId = (await createApp(t, owner.token, orgId, { confidential: false, scopes: ['account:read', 'orgs:read'], name: 'Acme Copilot', redirect }))[
      'client-id'
    ];
    await browser.launch();
    page = await browser.openPage('owner');
    await browser.contextOf('owner').grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await closeServer(landing);
    await closeServer(documents?.server);
  });

  const step = browser.step;

  const discover = (clientId: string) =>
    oauthClient.discovery(new URL(`${t.url}/oauth`), clientId, { redirect_uris: [redirect] }, oauthClient.None(), {
      execute: [oauthClient.allowInsecureRequests],
    });

  /**
   * The assistant sends the browser to the provider for `APP_URL/mcp`; on the consent page,
   * `check` looks, then Allow; back at the assistant, it redeems the code: its token for /mcp.
   */
  async function connect(name: string, config: oauthClient.Configuration, scope: string, check: () => Promise<void>) {
    const verifier = oauthClient.randomPKCECodeVerifier();
    const state = oauthClient.randomState();
    const url = oauthClient.buildAuthorizationUrl(config, {
      redirect_uri: redirect,
      scope,
      code_challenge: await oauthClient.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: `${t.url}/mcp`,
    });
    await page.goto(url.href);
    await page.locator('#consent-card').waitFor();
    await browser.networkQuiet(page);
    await check();
    await page.locator('#consent-allow').click();
    await page.waitForURL(`${redirect}**`);
    const granted = await oauthClient.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal((await post(t.url, INITIALIZE, { authorization: `Bearer ${granted.access_token}` })).status, 200, `${name} reaches /mcp`);
    tokens.set(name, granted.access_token);
  }

  const consentText = async () => ({
    title: (await page.locator('#consent-title').textContent()) ?? '',
    from: (await page.locator('#consent-organization').textContent()) ?? '',
    warnings: await page.locator('#consent-unreviewed').count(),
  });

  /** axe-core again in the dark theme (the warning's colors are the theme's), then light again */
  async function darkToo(what: string) {
    await page.emulateMedia({ colorScheme: 'dark' });
    // the controls' colors change through a transition: checked once it ended
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
    assert.deepEqual(await axeViolations(page), [], `axe-core on ${what}, dark`);
    await page.emulateMedia({ colorScheme: 'light' });
  }

  step('the owner logs in', async () => {
    await logInThroughPage(page, t.url, owner, PASSWORD);
  });

  step("an organization's app: the consent page names its organization and warns of nothing", async () => {
    await connect('Acme Copilot', await discover(copilotClientId), 'account:read orgs:read', async () => {
      const consent = await consentText();
      assert.equal(consent.title, 'Allow Acme Copilot to use your account?');
      assert.equal(consent.from, `An app of the organization ${orgName}.`);
      assert.equal(consent.warnings, 0, 'no warning for a reviewed app');
    });
  });

  step('a dynamically registered client: named by its own name, under the warning that Rocketship has not reviewed it', async () => {
    const registered = await oauthClient.dynamicClientRegistration(
      new URL(`${t.url}/oauth`),
      { redirect_uris: [redirect], token_endpoint_auth_method: 'none', client_name: 'Helper Bot', scope: 'account:read' },
      oauthClient.None(),
      { execute: [oauthClient.allowInsecureRequests] },
    );
    await connect('Helper Bot', registered, 'account:read', async () => {
      const consent = await consentText();
      assert.equal(consent.title, 'Allow Helper Bot to use your account?');
      assert.equal(consent.from, 'It registered itself, and belongs to no organization here.');
      assert.equal(consent.warnings, 1);
      const warning = (await page.locator('#consent-unreviewed').textContent()) ?? '';
      assert.match(warning, /Rocketship has not reviewed this app/);
      assert.match(warning, /Allow it only if you trust it and you started this connection yourself/);
      assert.deepEqual(await axeViolations(page), [], 'axe-core on the warning consent page');
      await darkToo('the warning consent page');
    });
  });

  step("a metadata document's client: named with its host, under the same warning", async () => {
    const host = new URL(documents.origin).host;
    await connect('Orbit Assistant', await discover(`${documents.origin}/assistant.json`), 'account:read', async () => {
      const consent = await consentText();
      assert.equal(consent.title, `Allow Orbit Assistant (${host}) to use your account?`);
      assert.equal(consent.from, `It describes itself at ${host}, and belongs to no organization here.`);
      assert.equal(consent.warnings, 1);
    });
  });

  step("the AI assistants page: the server's URL copied, the configuration files, the three assistants with their scopes; axe-core finds nothing", async () => {
    await page.goto(`${t.url}/settings`);
    await page.locator('#nav-ai-assistants').click();
    await page.waitForURL(`${t.url}/settings/ai-assistants`);
    const url = `${t.url}/mcp`;
    const field = page.getByRole('textbox', { name: 'MCP server URL' });
    await field.waitFor();
    assert.equal(await field.inputValue(), url, "the protected resource metadata's resource");
    assert.equal(await field.getAttribute('readonly'), '');
    await page.locator('#copy-mcp-server-url').click();
    await page.getByText('The server URL copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);

    for (const name of ['Claude', 'ChatGPT', 'Cursor', 'VS Code']) await page.getByRole('heading', { name, level: 3 }).waitFor();
    assert.deepEqual(JSON.parse((await page.locator('#cursor-config').textContent()) ?? ''), { mcpServers: { rocketship: { url } } });
    await page.getByRole('button', { name: "Copy VS Code's configuration" }).click();
    await page.getByText("VS Code's configuration copied").waitFor();
    assert.deepEqual(JSON.parse(await page.evaluate(() => navigator.clipboard.readText())), { servers: { rocketship: { type: 'http', url } } });

    const rows = page.locator('#connected-assistants tr[data-assistant]');
    await rows.first().waitFor();
    const listed = await rows.evaluateAll((trs) =>
      trs
        .map((tr) => ({ reviewed: tr.getAttribute('data-reviewed'), name: tr.querySelector('td')?.textContent?.trim() }))
        .sort((a, b) => (a.name! < b.name! ? -1 : 1)),
    );
    const host = new URL(documents.origin).host;
    assert.deepEqual(listed, [
      { reviewed: 'true', name: `Acme Copilot${orgName}` },
      { reviewed: 'false', name: 'Helper BotNot reviewed' },
      { reviewed: 'false', name: `Orbit Assistant${host} · Not reviewed` },
    ]);
    const copilot = page.locator('#connected-assistants tr[data-reviewed=true]');
    assert.deepEqual(await copilot.locator('li[data-scope]').allTextContents(), [SCOPE_WORDS['account:read'], SCOPE_WORDS['orgs:read']]);
    assert.notEqual(await copilot.locator('[data-field=last-used-at]').textContent(), 'never', 'its token was issued just now');
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the AI assistants page');
    await darkToo('the AI assistants page');

    // the connected apps page lists every grant, the assistants and the API's app alike
    await page.locator('#nav-connected-apps').click();
    await page.locator('#connected-apps tr[data-connected-app]').first().waitFor();
    assert.equal(await page.locator('#connected-apps tr[data-connected-app]').count(), 4);
  });

  /** Polls /mcp with `token` until it is refused (a revocation reaches every instance within 1 s). */
  async function refusedAtMcp(token: string) {
    let status = 0;
    for (let tries = 0; tries < 40; tries++) {
      status = (await post(t.url, INITIALIZE, { authorization: `Bearer ${token}` })).status;
      if (status === 401) return;
      await sleep(50);
    }
    assert.equal(status, 401, 'the revoked token is refused at /mcp');
  }

  step('revoking an assistant asks first; confirmed, its token is refused at /mcp; the last one gone, the page says none is connected', async () => {
    await page.goto(`${t.url}/settings/ai-assistants`);
    const row = (name: string) => page.locator('#connected-assistants tr[data-assistant]', { hasText: name });
    await row('Helper Bot').waitFor();
    const confirmation = page.locator('dialog[open]');
    await row('Helper Bot').locator('.revoke-assistant').click();
    assert.match((await confirmation.textContent()) ?? '', /Revoke Helper Bot\?/);
    await confirmation.locator('.confirm-cancel').click();
    await confirmation.waitFor({ state: 'detached' });
    assert.equal(
      (await post(t.url, INITIALIZE, { authorization: `Bearer ${tokens.get('Helper Bot')}` })).status,
      200,
      'a canceled confirmation revokes nothing',
    );

    for (const name of ['Helper Bot', 'Orbit Assistant', 'Acme Copilot']) {
      await row(name).locator('.revoke-assistant').click();
      await confirmation.locator('.confirm-ok').click();
      const toast = page.locator('.toast', { hasText: `${name} is disconnected` });
      await toast.waitFor();
      // the toasts sit at the bottom right, over the last row's button: dismissed, they are out of the next click's way
      await toast.getByRole('button', { name: 'Dismiss message' }).click();
      await row(name).waitFor({ state: 'detached' });
      await refusedAtMcp(tokens.get(name)!);
    }
    await page.locator('#no-assistants').waitFor();
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the empty state');

    await page.locator('#nav-connected-apps').click();
    await page.locator('#connected-apps tr[data-connected-app]').first().waitFor();
    assert.deepEqual(await page.locator('#connected-apps tr[data-connected-app] td:first-child').allTextContents(), [`Partner CRM${orgName}`]);
  });
});
