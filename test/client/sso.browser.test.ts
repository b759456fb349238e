/**
 * The organization's Single sign-on page in Chromium before anything is configured (issue 38):
 * "not configured" is a normal state, so the page loads without a failing request or a console
 * error, shows "No identity provider connected yet", and shows it again after the owner
 * connects an identity provider and removes the connection on the page.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../support/auth.js';
import { browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { makeIdp } from '../sso/support.js';

const browser = browserHarness('sso');

describe('the Single sign-on page with nothing configured', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;
  let owner: TestAccount;
  let orgId = '';

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    owner = await account(t);
    orgId = await createOrg(t, owner, 'Unconfigured');
    await browser.launch();
    page = await browser.openPage('owner');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  browser.step('an owner opens the page: no console error, "not connected yet"', async () => {
    await logInThroughPage(page, t.url, owner, PASSWORD);
    const answered = page.waitForResponse((r) => r.url().endsWith(`/api/orgs/${orgId}/sso/saml`));
    await page.goto(`${t.url}/orgs/${orgId}/sso`);
    assert.equal((await answered).status(), 200);
    await page.locator('#no-connection').waitFor();
    await page.locator('#sso-saml').getByRole('button', { name: 'Save connection' }).waitFor();
    // a sign-on never makes an owner
    assert.deepEqual(await page.locator('#saml-role option').allTextContents(), ['member', 'admin']);
  });

  browser.step('a connection made and removed on the page: "not connected" again after a reload, still quiet', async () => {
    const idp = await makeIdp();
    await page.getByLabel('Identity provider metadata (XML)').fill(idp.metadata);
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.locator('#saml-connection').waitFor();
    await page.locator('.delete-connection').click();
    await page.locator('dialog[open]').getByRole('button', { name: 'Remove connection' }).click();
    await page.locator('#no-connection').waitFor();
    assert.deepEqual((await as(t, owner, 'GET', `/api/orgs/${orgId}/sso/saml`)).body, { connection: null });
    await page.reload();
    await page.locator('#no-connection').waitFor();
  });
});
