/**
 * End to end in a real browser: sign-up -> account page -> access token expiry -> transparent
 * refresh -> log-out -> redirect to log-in. Debian's Chromium through playwright-core; a
 * screenshot is kept in test-artifacts/ when a step fails. Over the whole run the page shows no
 * console error and no failing request (status >= 400, or no answer), except those a step
 * provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const CHROMIUM = '/usr/bin/chromium';
const PUBLIC_DIR = fileURLToPath(new URL('../../public', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));
const TTL = 2;

if (process.env.CI === 'true' && !existsSync(CHROMIUM)) throw new Error(`CI=true requires Chromium at ${CHROMIUM}`);

describe('browser client', { skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed' }, () => {
  let t: TestSystem;
  let browser: Browser;
  let page: Page;
  const seen: string[] = [];
  /** console errors, page errors and failing requests since the current step began */
  const problems: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${PUBLIC_DIR}/index.html`), 'the client is built (npm run build:client)');
    t = await startSystem(testDatabases()[0], { ACCESS_TOKEN_TTL: String(TTL), PUBLIC_DIR });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage();
    page.on('response', (r) => {
      const line = `${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`;
      if (r.url().includes('/api/')) seen.push(line);
      if (r.status() >= 400) problems.push(`response: ${line}`);
    });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`); });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  /**
   * Runs a step; on failure keeps a screenshot of the page. `provokes` lists the failures the
   * step causes on purpose (matched against the problem lines); any other problem fails it.
   */
  const step = (name: string, fn: () => Promise<void>, provokes: RegExp[] = []) => it(name, async () => {
    problems.length = 0;
    try {
      await fn();
      await sleep(100); // late console messages of the step's last request
      const unexpected = problems.filter((p) => !provokes.some((re) => re.test(p)));
      assert.deepEqual(unexpected, [], 'no console error and no failing request');
    } catch (err) {
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}/${name.replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => undefined);
      throw err;
    }
  });

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
    for (const [path, type] of [['/favicon.ico', /^image\//], ['/favicon.svg', /^image\/svg\+xml/], ['/robots.txt', /^text\/plain/]] as const) {
      const res = await page.request.get(`${t.url}${path}`);
      assert.equal(res.status(), 200, path);
      assert.match(res.headers()['content-type'] ?? '', type);
    }
  });

  step('signs up and lands on the account page', async () => {
    await page.getByRole('link', { name: 'Sign up' }).click();
    await page.waitForURL(`${t.url}/sign-up`);
    await page.getByLabel('Name').fill('Browser User');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password (8+ characters)').fill(password);
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${t.url}/account`);
    assert.equal(await page.locator('[data-field=email]').textContent(), email);
    assert.equal(await page.locator('[data-field=subscription]').textContent(), 'none');
  });

  step('refreshes an expired access token transparently', async () => {
    await sleep((TTL + 1) * 1000);
    seen.length = 0;
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.waitForFunction(() => document.querySelector('[data-field=email]') !== null);
    await sleep(300);
    assert.deepEqual(seen, ['GET /api/account/me 401', 'POST /api/account/refresh 200', 'GET /api/account/me 200']);
    assert.equal(await page.locator('.toast').count(), 0);
  }, [/^response: GET \/api\/account\/me 401$/, /^console: Failed to load resource: .*401.*\/api\/account\/me\)$/]);

  step('keeps the session across a page reload through the refresh cookie', async () => {
    await page.reload();
    await page.locator('[data-field=email]').waitFor();
    assert.equal(await page.locator('[data-field=email]').textContent(), email);
  });

  step('logs out and is sent to log in, and stays logged out', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${t.url}/log-in`);
    assert.ok(!(await page.evaluate(() => document.cookie)).includes('has-session'), 'the hint left with the session');
    seen.length = 0;
    await page.goto(`${t.url}/account`);
    await page.waitForURL(`${t.url}/log-in`);
    assert.deepEqual(seen, [], 'no refresh attempt after log-out');
  });

  step('shows failures as toasts, and logs back in', async () => {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password!');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('.toast').filter({ hasText: 'Invalid email or password' }).waitFor();
    assert.equal(await page.getByLabel('Email').inputValue(), email, 'typed input survives the failure');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${t.url}/account`);
    assert.equal(await page.locator('[data-field=name]').textContent(), 'Browser User');
  }, [/^response: POST \/api\/account\/log-in 401$/, /^console: Failed to load resource: .*401.*\/api\/account\/log-in\)$/]);

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
  }, [/^response: POST \/api\/account\/refresh 401$/, /^console: Failed to load resource: .*401.*\/api\/account\/refresh\)$/]);
});
