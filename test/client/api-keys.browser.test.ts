/**
 * API keys end to end in a real browser (Debian's Chromium through playwright-core): an owner
 * opens the API keys page from the organization's page, makes a key, copies it from the one time
 * it is shown (the key works), closes it (it is gone from the page for good), sees the key listed
 * by its prefix, and revokes it after confirming (the key is refused). No console error or
 * failing request over the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { PASSWORD, signUpVerified, uniqueEmail } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const browser = browserHarness('api-keys');

describe('API keys in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    await browser.launch();
    page = await browser.openPage('page');
    await browser.contextOf('page').grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  browser.step('an owner makes a key, copies it once, and revokes it', async () => {
    // an API key needs its maker's address verified
    const { email } = await signUpVerified(t, uniqueEmail('keys'));
    await page.goto(`${t.url}/log-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
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
    assert.match((await page.locator('#created-api-key').textContent()) ?? '', /will not be shown again/);
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
    assert.match((await row.textContent()) ?? '', new RegExp(`CI deploys.*sk_${prefix}_…`));

    // revoking asks first, in a modal <dialog>: canceled, nothing happens; confirmed, the key is refused
    const confirmation = page.locator('dialog[open]');
    await row.locator('.revoke-api-key').click();
    assert.match((await confirmation.textContent()) ?? '', /Revoke the key CI deploys\?/);
    await confirmation.locator('.confirm-cancel').click();
    await confirmation.waitFor({ state: 'detached' });
    await sleep(200);
    assert.equal((await asKey()).status, 200, 'a canceled confirmation revokes nothing');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('revoke-api-key')), true, 'the focus is back on the button');
    await row.locator('.revoke-api-key').click();
    await confirmation.locator('.confirm-ok').click();
    await page.getByText('CI deploys was revoked').waitFor();
    await page.locator('#no-api-keys').waitFor();
    assert.equal((await asKey()).status, 401);
  });
});
