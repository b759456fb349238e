/**
 * API keys end to end in a real browser (Debian's Chromium through playwright-core): an owner
 * opens the API keys page from the organization's page, makes a key, copies it from the one time
 * it is shown (the key works), closes it (it is gone from the page for good), sees the key listed
 * by its prefix, and revokes it after confirming (the key is refused). No console error or
 * failing request over the run.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const CHROMIUM = '/usr/bin/chromium';
const PUBLIC_DIR = fileURLToPath(new URL('../../public', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));

if (process.env.CI === 'true' && !existsSync(CHROMIUM)) throw new Error(`CI=true requires Chromium at ${CHROMIUM}`);

describe('API keys in the browser', { skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed' }, () => {
  let t: TestSystem;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${PUBLIC_DIR}/index.html`), 'the client is built (npm run build:client)');
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page = await context.newPage();
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`response: ${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`); });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`); });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('an owner makes a key, copies it once, and revokes it', async () => {
    try {
      const { email } = await signUp(t.client, uniqueEmail('keys'));
      await page.goto(`${t.url}/log-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${t.url}/account`);

      // from the organization's page (the personal one: its owner is an admin and more)
      await page.locator('#nav-orgs').click();
      await page.locator('#org-list a').first().click();
      await page.waitForURL(/\/orgs\/[0-9a-f-]{36}$/);
      const orgId = new URL(page.url()).pathname.split('/')[2];
      await page.locator('#org-api-keys-link').click();
      await page.waitForURL(`${t.url}/orgs/${orgId}/api-keys`);
      await page.locator('#no-api-keys').waitFor();

      await page.getByLabel('Name').fill('CI deploys');
      await page.getByLabel('Role').selectOption('member');
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = page.locator('#new-api-key');
      await shown.waitFor();
      const key = await shown.inputValue();
      assert.match(key, /^sk_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/);
      assert.match(await page.locator('#created-api-key').textContent() ?? '', /will not be shown again/);
      assert.equal(await page.getByLabel('Name').inputValue(), '', 'the form is cleared');

      await page.locator('#copy-api-key').click();
      await page.getByText('Key copied').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
      const asKey = () => t.client('GET', `/api/orgs/${orgId}/members`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal((await asKey()).status, 200, 'the copied key works');

      const prefix = key.slice(3, 11);
      const row = page.locator(`#api-keys tr[data-prefix="${prefix}"]`);
      await row.waitFor();
      await page.locator('#close-api-key').click();
      await page.locator('#created-api-key').waitFor({ state: 'detached' });
      assert.ok(!(await page.content()).includes(key.slice(12)), 'the secret left the page');
      await page.reload();
      await row.waitFor();
      assert.ok(!(await page.content()).includes(key.slice(12)), 'and does not come back');
      assert.match(await row.textContent() ?? '', new RegExp(`CI deploys.*sk_${prefix}_…`));

      // revoking asks first: dismissed, nothing happens; accepted, the key is refused
      page.once('dialog', (d) => void d.dismiss());
      await row.locator('.revoke-api-key').click();
      await sleep(200);
      assert.equal((await asKey()).status, 200, 'a dismissed confirmation revokes nothing');
      page.once('dialog', (d) => {
        assert.match(d.message(), /Revoke the key CI deploys/);
        void d.accept();
      });
      await row.locator('.revoke-api-key').click();
      await page.getByText('CI deploys was revoked').waitFor();
      await page.locator('#no-api-keys').waitFor();
      assert.equal((await asKey()).status, 401);

      await sleep(100); // late console messages of the last request
      assert.deepEqual(problems, [], 'no console error and no failing request');
    } catch (err) {
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}/api-keys.png`, fullPage: true }).catch(() => undefined);
      throw err;
    }
  });
});
