/**
 * Every page of the client in Chromium (issue 31; docs/client.md): the public pages signed out, the
 * signed-in pages of an owner whose organization has members, an invitation, an API key, a webhook
 * endpoint with a delivery (its log open), an audit log and its streams page with a stream, and two AI assistants connected to the MCP
 * server (the organization's and one that registered itself), notifications (the bell's panel
 * open, the Notifications page, the preferences grid and the organization's defaults), against a local Stripe with monthly and
 * yearly prices. Each page, light at 1280 px and dark at 390 px: axe-core (WCAG 2.0, 2.1 and 2.2 A
 * and AA) finds no violation, no console error or warning (a CSP violation is one), no request
 * answers 4xx/5xx or fails, nothing is wider than the screen. Also: the landing page's product and
 * its dashboard link, the pricing toggle, the theme toggle, the 404 page, focus on the title after
 * a navigation, the menu button below 768 px; an OAuth app's sign-in through the consent page (a
 * signed-out visitor logs in there, allows, and the app redeems the code with openid-client).
 *
 * With SCREENSHOTS=<dir> (`npm run screenshots`) each page's picture is written there as
 * `<page>-light.png` and `<page>-dark.png`.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD, uniqueEmail } from '../support/auth.js';
import { axeViolations, browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { billingEnv } from '../billing/support.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';
import { receiver, type Receiver } from '../webhooks/support.js';
import { makeIdp, uniqueDomain } from '../sso/support.js';
import * as oauthClient from 'openid-client';
import { freePort } from '../support/net.js';
import { authorize, createApp, INTERACTION_COOKIES, newBrowser, REDIRECT } from '../oauth/support.js';
import { mcpApp, mcpToken } from '../mcp/support.js';

const SCREENSHOTS = process.env.SCREENSHOTS;

const MODES = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' as const },
];

/** The public pages: [name, path, what shows it is there]. */
const PUBLIC: Array<[string, string, string]> = [
  ['landing', '/', '#product-pitch'],
  ['pricing', '/pricing', '[data-plan-card]'],
  ['log-in', '/log-in', 'form#log-in'],
  ['sign-up', '/sign-up', 'form#sign-up'],
  // a provider's callback hands over the mfa-token in the fragment (checked when the code is sent)
  ['email-sign-in', '/auth/email', 'form#email-sign-in-start'],
  ['log-in-two-factor', '/log-in/two-factor#mfa-token=not-checked-until-sent', 'form#mfa'],
  ['forgot-password', '/forgot-password', 'form#forgot-password'],
  ['reset-password', '/reset-password?token=not-checked-until-sent', 'form#reset-password'],
  ['verify-email', '/verify-email', '#token-status[data-status=failed]'],
  ['invitation', '/invitations/accept', '#invitation-status'],
  ['not-found', '/no-such-page', '#not-found'],
];

const browser = browserHarness('pages');

describe('every page: accessible, quiet, and no wider than the screen', { skip: browser.skip }, () => {
  let t: TestSystem;
  let stripe: FakeStripe;
  let hook: Receiver;
  let owner: TestAccount;
  let orgId = '';
  let memberId = '';
  let consentUid = '';
  // the consent page answers only the browser the request started in: the owner's pages get its cookie
  let interactionCookies: Array<{ name: string; value: string }> = [];
  const pages: Record<string, Page> = {};

  /** The signed-in pages: [name, path, what shows it is there, what to open on it before the checks]. */
  const signedIn = (): Array<[string, string, string, ((page: Page) => Promise<void>)?]> => [
    ['dashboard', '/account', '#account [data-field=email]'],
    // the bell's panel open over the dashboard: the member who joined, the sign-in from this browser
    [
      'notifications-panel',
      '/account',
      '#notifications-button[aria-label$=" unread"]',
      async (page) => {
        await page.locator('#notifications-button').click();
        await page.locator('#notifications-latest li[data-notification]').first().waitFor();
      },
    ],
    ['notifications', '/notifications', '#notification-list li[data-notification]'],
    ['notification-preferences', '/settings/notifications', '#preference-grid tr[data-category]'],
    ['profile', '/settings', 'form#settings-name'],
    ['security', '/settings/security', '#no-passkeys'],
    ['sessions', '/settings/sessions', 'table#sessions tr[data-current=true]'],
    ['delete-account', '/settings/delete', 'form#delete-account'],
    ['organizations', '/orgs', '#org-list'],
    ['organization', `/orgs/${orgId}`, '#org-plan'],
    ['members', `/orgs/${orgId}/members`, '#invitations tr[data-invitation]'],
    ['api-keys', `/orgs/${orgId}/api-keys`, '#api-keys tr[data-api-key]'],
    [
      'webhooks',
      `/orgs/${orgId}/webhooks`,
      '#webhooks li.webhook',
      async (page) => {
        await page.locator('#webhooks .show-log').first().click();
        await page.locator('#delivery-log tr[data-delivery]').first().waitFor();
      },
    ],
    [
      'sso',
      `/orgs/${orgId}/sso`,
      '#scim-tokens li[data-token]',
      async (page) => {
        await page.locator('#saml-connection').waitFor();
        await page.locator('#domains li[data-domain]').first().waitFor();
      },
    ],
    ['audit-log', `/orgs/${orgId}/audit-log`, '#audit-log tr[data-entry]'],
    ['audit-log-streams', `/orgs/${orgId}/audit-log/streams`, '#streams li.stream'],
    ['notification-defaults', `/orgs/${orgId}/notifications`, '#preference-grid tr[data-category]'],
    ['oauth-apps', `/orgs/${orgId}/oauth-apps`, '#oauth-apps tr[data-oauth-app]'],
    ['connected-apps', '/settings/connected-apps', '#connected-apps tr[data-connected-app]'],
    ['ai-assistants', '/settings/ai-assistants', '#connected-assistants tr[data-assistant]', (page) => page.locator('#mcp-server-url').waitFor()],
    ['consent', `/authorize/${consentUid}`, '#consent-card'],
    ['billing', `/orgs/${orgId}/billing`, '[data-plan]'],
    ['usage', `/orgs/${orgId}/usage`, '[data-chart=api-calls]'],
    ['admin', '/admin', '#admin-stats [data-field=accounts]'],
    ['admin-accounts', '/admin/accounts', '#admin-accounts tr[data-account]'],
    ['admin-account', `/admin/accounts/${memberId}`, '#admin-account-orgs tr[data-org]'],
    ['admin-orgs', '/admin/orgs', '#admin-orgs tr[data-org]'],
    ['admin-audit-log', '/admin/audit-log', '#admin-audit tr[data-action]'],
  ];

  const ownerEmail = uniqueEmail('owner');

  before(async () => {
    stripe = await startFakeStripe();
    hook = await receiver();
    stripe.prices.price_pro_year = { product: 'Pro', unitAmount: 12000, currency: 'usd', interval: 'year' };
    stripe.prices.price_team_year = { product: 'Team', unitAmount: 49000, currency: 'usd', interval: 'year' };
    // a known address: the OAuth provider's issuer (the consent page's requests) names it
    const port = await freePort();
    t = await startSystem(
      testDatabases()[0],
      billingEnv(stripe.url, {
        PORT: String(port),
        APP_URL: `http://127.0.0.1:${port}`,
        PUBLIC_DIR,
        BILLING_PLANS: 'pro=price_pro_2024,team=price_team_2024,pro-yearly=price_pro_year,team-yearly=price_team_year',
        PRODUCT_NAME: 'Rocketship',
        PRODUCT_PITCH: "Launch your team's work into orbit.",
        // the endpoint is the receiver on 127.0.0.1
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // an assistant that registered itself (the AI assistants page, with its "Not reviewed" mark)
        OAUTH_DYNAMIC_REGISTRATION: 'on',
        // the owner is a platform admin: the admin pages are among those checked
        ADMIN_EMAILS: ownerEmail,
      }),
    );
    owner = await account(t, { email: ownerEmail });
    orgId = await createOrg(t, owner, 'Acme Rockets');
    const member = await account(t);
    memberId = member.id;
    await addMember(t, orgId, owner, member, 'admin');
    // an admin action, for the admin audit log's page
    assert.equal((await as(t, owner, 'POST', `/api/admin/accounts/${memberId}/lock`, { reason: 'checking the console' })).status, 200);
    assert.equal((await as(t, owner, 'POST', `/api/admin/accounts/${memberId}/unlock`, {})).status, 200);
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/invitations`, { email: uniqueEmail('invited'), role: 'member' })).status, 201);
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'CI deploys', role: 'member' })).status, 201);
    const endpoint = await as(t, owner, 'POST', `/api/orgs/${orgId}/webhooks`, {
      url: `${hook.url}/crm`,
      events: ['member.updated', 'api-key.created'],
      description: 'CRM sync',
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/webhooks/${endpoint.body.id as string}/test`)).status, 202);
    // the audit log's streams page with a stream
    const stream = await as(t, owner, 'POST', `/api/orgs/${orgId}/audit-log/streams`, { kind: 'https', url: `${hook.url}/audit-log` });
    assert.equal(stream.status, 201, stream.text);
    // the Single sign-on page with a domain waiting for its TXT record, a SAML connection and a SCIM token
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/domains`, { domain: uniqueDomain() })).status, 201);
    assert.equal((await as(t, owner, 'PUT', `/api/orgs/${orgId}/sso/saml`, { 'metadata-xml': (await makeIdp()).metadata })).status, 200);
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${orgId}/scim-tokens`, { name: 'Okta' })).status, 201);
    // an OAuth app the owner connected (the connected apps page), and its pending request for more (the consent page)
    const app = await createApp(t, owner.token, orgId, { confidential: false, scopes: ['openid', 'email', 'account:read'], name: 'Partner CRM' });
    const oauth = await oauthClient.discovery(new URL(`${t.url}/oauth`), app['client-id'], { redirect_uris: [REDIRECT] }, oauthClient.None(), {
      execute: [oauthClient.allowInsecureRequests],
    });
    await authorize(t, oauth, newBrowser(), owner.token, { scope: 'openid account:read' });
    // two AI assistants connected to the MCP server (the AI assistants page): the organization's, and one that registered itself
    await mcpToken(t, await mcpApp(t, owner.token, orgId, ['account:read', 'orgs:read']), owner.token, 'account:read orgs:read');
    const registered = await oauthClient.dynamicClientRegistration(
      new URL(`${t.url}/oauth`),
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Helper Bot', scope: 'account:read' },
      oauthClient.None(),
      { execute: [oauthClient.allowInsecureRequests] },
    );
    await mcpToken(t, registered, owner.token, 'account:read');
    const challenge = await oauthClient.calculatePKCECodeChallenge(oauthClient.randomPKCECodeVerifier());
    const pending = oauthClient.buildAuthorizationUrl(oauth, {
      redirect_uri: REDIRECT,
      scope: 'openid email account:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const started = newBrowser();
    consentUid = /\/authorize\/([^/?#]+)$/.exec((await started.visit(pending.href)).location)![1];
    interactionCookies = INTERACTION_COOKIES.map((name) => ({ name, value: started.cookies.get(name)! }));
    await browser.launch();
    for (const mode of MODES) {
      for (const who of ['visitor', 'owner']) {
        pages[`${who}-${mode.name}`] = await browser.openPage(`${who}-${mode.name}`, {
          context: { viewport: mode.viewport, colorScheme: mode.colorScheme },
          warnings: true,
        });
      }
      await browser.contextOf(`owner-${mode.name}`).addCookies(interactionCookies.map((c) => ({ ...c, url: t.url })));
    }
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await stripe?.close();
    await hook?.close();
  });

  const step = browser.step;

  /** Opens `path`, waits until it shows `ready` and the network is quiet, then checks it. */
  async function check(page: Page, name: string, mode: string, path: string, ready: string, open?: (page: Page) => Promise<void>) {
    await page.goto(`${t.url}${path}`);
    await page.locator(ready).first().waitFor();
    await open?.(page);
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], `axe-core on ${name} (${mode})`);
    const width = await page.evaluate(() => {
      const client = document.documentElement.clientWidth;
      // the elements reaching past the screen's right edge, to say what is too wide
      const wide = [...document.body.querySelectorAll('*')]
        .filter((e) => e.getBoundingClientRect().right > client + 1)
        .slice(0, 3)
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${[...e.classList].slice(0, 4).join('.')}`);
      return { scroll: document.documentElement.scrollWidth, client, wide };
    });
    assert.ok(width.scroll <= width.client, `${name} (${mode}) is ${width.scroll} px wide on a ${width.client} px screen: ${width.wide.join(', ')}`);
    assert.equal(await page.locator('h1').count(), 1, `${name} has one h1`);
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${name}-${mode}.png`, fullPage: true });
  }

  for (const mode of MODES) {
    for (const [name, path, ready] of PUBLIC) {
      step(`${name} (${mode.name}, ${mode.viewport.width} px, signed out)`, async () => {
        await check(pages[`visitor-${mode.name}`], name, mode.name, path, ready);
      });
    }
    step(`the owner logs in (${mode.name})`, async () => {
      const page = pages[`owner-${mode.name}`];
      await page.goto(`${t.url}/log-in`);
      await page.locator('#log-in-email').fill(owner.email);
      await page.locator('#log-in-password').fill(PASSWORD);
      await page.locator('form#log-in button[type=submit]').click();
      await page.waitForURL(`${t.url}/account`);
    });
    step(`every signed-in page (${mode.name}, ${mode.viewport.width} px)`, async () => {
      for (const [name, path, ready, open] of signedIn()) await check(pages[`owner-${mode.name}`], name, mode.name, path, ready, open);
    });
  }

  step('the landing page shows the configured product, offers a signed-in visitor the dashboard, and lists the prices', async () => {
    const visitor = pages['visitor-light'];
    await visitor.goto(`${t.url}/`);
    assert.equal(await visitor.locator('h1').textContent(), 'Rocketship');
    assert.equal(await visitor.locator('#product-pitch').textContent(), "Launch your team's work into orbit.");
    assert.equal(await visitor.title(), 'Home · Rocketship');
    await visitor.locator('#hero-sign-up').waitFor();
    const owner = pages['owner-light'];
    await owner.goto(`${t.url}/`);
    await owner.locator('#hero-dashboard').click();
    await owner.waitForURL(`${t.url}/account`);
  });

  step("pricing: monthly by default, yearly on the toggle, with Stripe's names and amounts", async () => {
    const page = pages['visitor-light'];
    await page.goto(`${t.url}/pricing`);
    const cards = page.locator('[data-plan-card]');
    await cards.first().waitFor();
    assert.deepEqual(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-plan-card'))), ['pro', 'team']);
    assert.match((await cards.first().textContent()) ?? '', /Pro\s*\$12\s*per month/);
    assert.equal(await page.locator('[data-interval=month]').getAttribute('aria-pressed'), 'true');
    await page.locator('[data-interval=year]').click();
    assert.deepEqual(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-plan-card'))), ['pro-yearly', 'team-yearly']);
    assert.match((await cards.first().textContent()) ?? '', /\$120\s*per year/);
  });

  step('an unknown address shows the 404 page with a way back', async () => {
    const page = pages['visitor-light'];
    await page.goto(`${t.url}/no/such/page`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.locator('#not-found-home').click();
    await page.waitForURL(`${t.url}/`);
    await page.locator('#product-pitch').waitFor();
  });

  step("the theme toggle overrides the system's choice and is remembered", async () => {
    const page = pages['visitor-light'];
    await page.goto(`${t.url}/log-in`);
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const light = await background();
    // the palette's own colors (style.css): --bg of each theme
    assert.equal(light, 'rgb(246, 247, 251)');
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    assert.equal(await background(), 'rgb(14, 19, 32)');
    assert.equal(await page.evaluate(() => localStorage.getItem('theme')), 'dark');
    await page.reload();
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    assert.equal(await background(), light);
  });

  step("a navigation moves the focus to the new page's title; below 768 px the side navigation opens from the menu button", async () => {
    const wide = pages['owner-light'];
    await wide.goto(`${t.url}/account`);
    await wide.locator('#nav-orgs').click();
    await wide.waitForURL(`${t.url}/orgs`);
    await wide.waitForFunction(() => document.activeElement?.hasAttribute('data-page-title'));
    assert.equal(await wide.evaluate(() => document.activeElement?.textContent), 'Organizations');
    assert.equal(await wide.title(), 'Organizations · Rocketship');

    const narrow = pages['owner-dark'];
    await narrow.goto(`${t.url}/orgs/${orgId}`);
    await narrow.locator('#org-plan').waitFor();
    assert.equal(await narrow.locator('#side-nav').isVisible(), false, 'the side navigation is folded away');
    await narrow.locator('#menu-button').click();
    assert.equal(await narrow.locator('#menu-button').getAttribute('aria-expanded'), 'true');
    // Escape folds it and gives the focus back to the button
    await narrow.locator('#nav-org-billing').focus();
    await narrow.keyboard.press('Escape');
    assert.equal(await narrow.locator('#side-nav').isVisible(), false, 'Escape folds it');
    assert.equal(await narrow.evaluate(() => document.activeElement?.id), 'menu-button');
    await narrow.locator('#menu-button').click();
    await narrow.locator('#nav-org-billing').click();
    await narrow.waitForURL(`${t.url}/orgs/${orgId}/billing`);
    assert.equal(await narrow.locator('#side-nav').isVisible(), false, 'it folds again after a choice');
    await narrow.waitForFunction(() => document.activeElement?.textContent === 'Billing');
  });
  step("an app's sign-in through the consent page: a signed-out visitor logs in there, allows, and the app redeems the code", async () => {
    // the app's redirect URI: a server of its own, so the browser lands on a page
    const appPort = await freePort();
    const landing = createServer((_req, res) => res.end('back at the app')).listen(appPort, '127.0.0.1');
    let page: Awaited<ReturnType<typeof browser.openPage>> | undefined;
    try {
      const redirect = `http://127.0.0.1:${appPort}/callback`;
      const registered = await createApp(t, owner.token, orgId, {
        confidential: false,
        scopes: ['openid', 'profile', 'orgs:read'],
        name: 'Globex Planner',
        redirect,
      });
      const config = await oauthClient.discovery(new URL(`${t.url}/oauth`), registered['client-id'], { redirect_uris: [redirect] }, oauthClient.None(), {
        execute: [oauthClient.allowInsecureRequests],
      });
      const verifier = oauthClient.randomPKCECodeVerifier();
      const state = oauthClient.randomState();
      const url = oauthClient.buildAuthorizationUrl(config, {
        redirect_uri: redirect,
        scope: 'openid profile orgs:read',
        code_challenge: await oauthClient.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      page = await browser.openPage('oauth-visitor');
      await page.goto(url.href);
      await page.waitForURL(/\/authorize\/[A-Za-z0-9_-]+$/);
      await page.locator('#log-in-email').fill(owner.email);
      await page.locator('#log-in-password').fill(PASSWORD);
      await page.locator('form#log-in button[type=submit]').click();
      await page.locator('#consent-card').waitFor();
      assert.match((await page.locator('#consent-title').textContent()) ?? '', /Globex Planner/);
      assert.match((await page.locator('#consent-organization').textContent()) ?? '', /Acme Rockets/);
      assert.equal(await page.locator('#consent-scopes li').count(), 3);
      await page.locator('#consent-allow').click();
      await page.waitForURL(`${redirect}**`);
      const tokens = await oauthClient.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
      assert.equal((await t.client('GET', '/api/orgs', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, 200);
    } finally {
      // the page first: Chromium asks the app's origin for /favicon.ico after landing there, which
      // a closed server would refuse (a console error, sometimes, depending on when it asks)
      await page?.close();
      landing.close();
    }
  });
});
