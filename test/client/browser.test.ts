/**
 * End to end in a real browser: sign-up -> account page -> access token expiry -> transparent
 * refresh (the request layer's; then the notification stream's own, when the server ends it for
 * the token's expiry) -> log-out -> redirect to log-in. Debian's Chromium through playwright-core; a
 * screenshot is kept in test-artifacts/ when a step fails. Over the whole run the page shows no
 * console error and no failing request (status >= 400, or no answer), except those a step
 * provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { browserHarness, NOTIFICATION_STREAM_PATH, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const TTL = 2;
const browser = browserHarness('client');

describe('browser client', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;
  /** the API calls the page made, `METHOD /path STATUS` */
  const seen: string[] = [];

  before(async () => {
    t = await startSystem(testDatabases()[0], { ACCESS_TOKEN_TTL: String(TTL), PUBLIC_DIR });
    await browser.launch();
    page = await browser.openPage('page', {
      onResponse: (r) => {
        if (r.url().includes('/api/')) seen.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
      },
    });
    // the live notification stream is held (never answered) but in its own step: ended by the server
    // at each token's expiry, it would refresh the token itself, and the request layer's own refresh
    // (the 401, the refresh, the retry) is what these steps watch
    await holdStream();
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;
  /** while true, a stream request is never answered; one held dies with its page (a reload) */
  let holding = true;
  const holdStream = () => page.route(`**${NOTIFICATION_STREAM_PATH}`, (route) => (holding ? undefined : route.continue()));

  const email = uniqueEmail('browser');
  const password = 'a long browser password';

  step('sends a visitor without a session to log in, without a failing request', async () => {
    seen.length = 0;
    await page.goto(`${t.url}/account`);
    await page.waitForURL(`${t.url}/log-in`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.deepEqual(seen, [], 'no session hint: no refresh attempt');
  });

  step('serves the favicon and robots.txt', async () => {
    for (const [path, type] of [
      ['/favicon.ico', /^image\//],
      ['/favicon.svg', /^image\/svg\+xml/],
      ['/robots.txt', /^text\/plain/],
    ] as const) {
      const res = await page.request.get(`${t.url}${path}`);
      assert.equal(res.status(), 200, path);
      assert.match(res.headers()['content-type'] ?? '', type);
    }
  });

  step('signs up and lands on the account page', async () => {
    await page.locator('#main').getByRole('link', { name: 'Sign up' }).click();
    await page.waitForURL(`${t.url}/sign-up`);
    await page.getByLabel('Name').fill('Browser User');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password (8+ characters)').fill(password);
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${t.url}/account`);
    assert.equal(await page.locator('[data-field=email]').textContent(), email);
    assert.equal(await page.locator('[data-field=subscription]').textContent(), 'No subscription');
  });

  step('refreshes an expired access token transparently', async () => {
    await sleep((TTL + 1) * 1000);
    seen.length = 0;
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.waitForFunction(() => document.querySelector('[data-field=email]') !== null);
    await sleep(300);
    assert.deepEqual(seen, ['GET /api/account/me 401', 'POST /api/account/refresh 200', 'GET /api/account/me 200']);
    assert.equal(await page.locator('.toast').count(), 0);
  }, [/^page response: GET \/api\/account\/me 401$/, /^page console: Failed to load resource: .*401.*\/api\/account\/me\)$/]);

  step('the live notification stream renews the token itself when the server ends it for expiry, and comes back', async () => {
    holding = false;
    await page.reload();
    await page.locator('[data-field=email]').waitFor();
    seen.length = 0;
    await sleep((TTL + 2.5) * 1000);
    const streams = seen.filter((s) => s === `GET ${NOTIFICATION_STREAM_PATH} 200`).length;
    assert.ok(streams >= 2, `the stream opened again after its end (${seen.join(', ')})`);
    assert.ok(seen.includes('POST /api/account/refresh 200'), 'the token refreshed for it');
    assert.deepEqual(
      seen.filter((s) => !/ 200$/.test(s)),
      [],
      'no refusal on the way',
    );
    holding = true;
  });

  step('keeps the session across a page reload through the refresh cookie', async () => {
    await page.reload();
    await page.locator('[data-field=email]').waitFor();
    assert.equal(await page.locator('[data-field=email]').textContent(), email);
  });

  step('logs out and is sent to log in, and stays logged out', async () => {
    await page.locator('#account-menu-button').click();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${t.url}/log-in`);
    assert.ok(!(await page.evaluate(() => document.cookie)).includes('has-session'), 'the hint left with the session');
    seen.length = 0;
    await page.goto(`${t.url}/account`);
    await page.waitForURL(`${t.url}/log-in`);
    assert.deepEqual(seen, [], 'no refresh attempt after log-out');
  });

  step('shows failures as toasts, and logs back in', async () => {
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password').fill('wrong password!');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('.toast').filter({ hasText: 'Invalid email or password' }).waitFor();
    assert.equal(await page.getByLabel('Email', { exact: true }).inputValue(), email, 'typed input survives the failure');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${t.url}/account`);
    assert.equal(await page.locator('[data-field=name]').textContent(), 'Browser User');
  }, [/^page response: POST \/api\/account\/log-in 401$/, /^page console: Failed to load resource: .*401.*\/api\/account\/log-in\)$/]);

  step('clears a stale session hint with one failing refresh, then asks no more', async () => {
    // the refresh token is revoked elsewhere (another tab logged out): the hint is stale
    await page.context().clearCookies({ name: 'refresh-token' });
    seen.length = 0;
    await page.goto(`${t.url}/account`);
    await page.waitForURL(`${t.url}/log-in`);
    assert.deepEqual(seen, ['POST /api/account/refresh 401']);
    assert.ok(!(await page.evaluate(() => document.cookie)).includes('has-session'), 'the 401 cleared the hint');
    seen.length = 0;
    await page.reload();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.deepEqual(seen, []);
  }, [/^page response: POST \/api\/account\/refresh 401$/, /^page console: Failed to load resource: .*401.*\/api\/account\/refresh\)$/]);
});
