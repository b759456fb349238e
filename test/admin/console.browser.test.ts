/**
 * The operator's console in a real browser (Debian's Chromium through playwright-core): a plain
 * account sees no "Platform" section and gets "not found" at /admin; the platform admin finds an
 * account by the start of its email, opens it, locks it (the account's own browser is signed
 * out at its next request) and unlocks it, then impersonates another account: the banner says
 * whose view it is on every page, a reload keeps it, a forbidden action is refused, and "Stop"
 * returns the browser to the admin's own session, with both events in the admin audit log.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../support/auth.js';
import { axeViolations, browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, createOrg, type TestAccount } from '../orgs/support.js';
import { adminAddresses } from './support.js';

const browser = browserHarness('admin');

describe('the admin console and impersonation in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  const pages = {} as Record<'admin' | 'user' | 'plain', Page>;
  let admin: TestAccount;
  let user: TestAccount;
  let plain: TestAccount;

  before(async () => {
    const addresses = adminAddresses();
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, ADMIN_EMAILS: addresses.verified });
    admin = await account(t, { email: addresses.verified });
    [user, plain] = await Promise.all([account(t), account(t)]);
    await createOrg(t, user, 'Customer Corp');
    await browser.launch();
    for (const who of ['admin', 'user', 'plain'] as const) pages[who] = await browser.openPage(who);
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;

  const logInAs = (page: Page, who: TestAccount) => logInThroughPage(page, t.url, who, PASSWORD);

  step('a plain account has no Platform section, and /admin is not found for it', async () => {
    const page = pages.plain;
    await logInAs(page, plain);
    assert.equal(await page.locator('#nav-admin').count(), 0);
    await page.goto(`${t.url}/admin`);
    await page.locator('#admin-missing').waitFor();
  }, [/GET \/api\/admin\/stats 404/, /404 .*\/api\/admin\/stats/]);

  step('the admin sees the numbers, finds the account by a prefix of its email and opens it', async () => {
    const page = pages.admin;
    await logInAs(page, admin);
    await page.locator('#nav-admin').click();
    await page.locator('#admin-stats [data-field=accounts]').waitFor();
    assert.ok(Number(await page.locator('#admin-stats [data-field=accounts]').textContent()) >= 3);
    await page.locator('#nav-admin-accounts').click();
    await page.locator('#admin-accounts tr[data-account]').first().waitFor();
    await page.getByLabel('Email or name starts with').fill(user.email.slice(0, user.email.indexOf('@')));
    await page.locator('#admin-accounts-search-submit').click();
    await page.locator(`#admin-accounts tr[data-account="${user.id}"]`).waitFor();
    assert.equal(await page.locator('#admin-accounts tr[data-account]').count(), 1);
    await page.getByRole('link', { name: user.email }).click();
    await page.waitForURL(`${t.url}/admin/accounts/${user.id}`);
    await page.locator('#admin-account-orgs tr', { hasText: 'Customer Corp' }).waitFor();
  });

  step("locking ends the account's sessions in its own browser; unlocking lets it sign in again", async () => {
    await logInAs(pages.user, user);
    const page = pages.admin;
    await page.getByLabel('Why lock it?').fill('chargeback fraud');
    await page.locator('#admin-lock-submit').click();
    await page.locator('#admin-locked', { hasText: 'chargeback fraud' }).waitFor();
    // the account's browser: its next request is refused and it is sent to log in (its live
    // notification stream may see the session end first and send it there before the reload)
    await pages.user.reload();
    await pages.user.waitForURL(/\/log-in/);
    await page.locator('#admin-unlock-submit').click();
    await page.locator('#admin-account[data-status=active]').waitFor();
    await logInAs(pages.user, user);
  }, [/POST \/api\/account\/refresh 40[13]/, /40[13] .*\/api\/account\/refresh/]);

  step('impersonating shows the banner on every page and after a reload; a forbidden action is refused', async () => {
    const page = pages.admin;
    await page.getByLabel('Why view as this account?').fill('support ticket #42');
    await page.locator('#admin-impersonate-submit').click();
    await page.waitForURL(`${t.url}/account`);
    const banner = page.locator('#impersonation-banner');
    await banner.waitFor();
    assert.match((await banner.textContent()) ?? '', new RegExp(`Viewing as ${user.email.replace(/[.+]/g, '\\$&')}`));
    assert.equal(await page.locator('#nav-admin').count(), 0, 'no admin pages inside an impersonation');
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], 'axe-core with the banner');
    await page.locator('#nav-orgs').click();
    await page.locator('#org-list').waitFor();
    await banner.waitFor();
    await page.reload();
    await page.locator('#impersonation-banner').waitFor();
    // a forbidden action, through the page: refused with the reason shown, nothing set up
    await page.goto(`${t.url}/settings/security`);
    await page.locator('#two-factor-setup').click();
    await page
      .locator('[data-toast]', { hasText: /impersonated session/ })
      .first()
      .waitFor();
    assert.equal(await page.locator('#two-factor-secret').count(), 0);
  }, [/POST \/api\/account\/2fa\/setup 403/, /403 .*\/api\/account\/2fa\/setup/]);

  step("stop returns the browser to the admin's own session, and the admin audit log has both", async () => {
    const page = pages.admin;
    await page.locator('#impersonation-stop').click();
    await page.waitForURL(`${t.url}/admin/accounts`);
    assert.equal(await page.locator('#impersonation-banner').count(), 0);
    await page.locator('#account-menu-button').click();
    await page.locator('#account-menu', { hasText: admin.email }).waitFor();
    await page.locator('#nav-admin-audit').click();
    await page.locator('#admin-audit tr[data-action="admin.impersonation-stopped"]').waitFor();
    await page.locator('#admin-audit tr[data-action="admin.impersonation-started"]', { hasText: 'support ticket #42' }).waitFor();
    await page.locator('#admin-audit tr[data-action="admin.account-locked"]').waitFor();
  });
});
