/**
 * The admin pages and impersonation in a real browser (Debian's Chromium through playwright-core):
 * a plain account sees no admin link and no admin page; the admin finds the account, impersonates
 * it with a reason confirmed in a dialog, and every page, a reload included, shows the "Viewing as"
 * banner; a refused action says why; "Stop" ends the session (its token refused) and returns the
 * browser to the admin's own session on the account's admin page. Over the run no page shows a
 * console error or a failing request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, createOrg, type TestAccount } from '../orgs/support.js';
import { adminAddresses } from './support.js';

const browser = browserHarness('admin');

describe('platform administration in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  const pages = {} as Record<'admin' | 'user', Page>;
  let admin: TestAccount;
  let user: TestAccount;
  const addresses = adminAddresses();
  let impersonatedSession: string | undefined;

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, ...addresses.env });
    [admin, user] = await Promise.all([account(t, { email: addresses.verified }), account(t)]);
    await createOrg(t, user, 'Customer Rockets');
    await browser.launch();
    for (const who of ['admin', 'user'] as const) {
      pages[who] = await browser.openPage(who, {
        // the session of the impersonation, as the browser sends it
        onRequest: (r) => {
          const auth = r.headers().authorization;
          if (who === 'admin' && auth && r.url().endsWith('/api/admin/impersonation/stop')) impersonatedSession = auth.slice('Bearer '.length);
        },
      });
    }
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;

  const logInAs = async (page: Page, who: TestAccount) => {
    await page.goto(`${t.url}/log-in`);
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${t.url}/account`);
    await page.locator('#org-switcher').waitFor();
  };

  step('a plain account sees no admin link, and the admin address shows a page that does not exist', async () => {
    const page = pages.user;
    await logInAs(page, user);
    assert.equal(await page.locator('#nav-admin').count(), 0);
    await page.goto(`${t.url}/admin`);
    await page.locator('#admin-not-found').waitFor();
    assert.equal(await page.locator('#admin-accounts, #admin-account-search').count(), 0);
  });

  step('the admin finds the account and impersonates it with a reason, confirmed in a dialog', async () => {
    const page = pages.admin;
    await logInAs(page, admin);
    await page.locator('#nav-admin').click();
    await page.waitForURL(`${t.url}/admin`);
    await page.locator('#admin-accounts tbody tr').first().waitFor();
    await page.getByLabel('Email or name starts with').fill(user.email.slice(0, 12));
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.locator(`#admin-accounts tr[data-email="${user.email}"]`);
    await row.waitFor();
    await row.locator('a').click();
    await page.waitForURL(`${t.url}/admin/accounts/${user.id}`);
    await page.locator('#admin-account').waitFor();
    assert.match(await page.locator('#admin-account-orgs').textContent() ?? '', /Customer Rockets/);
    await page.locator('#admin-impersonate-reason').fill('ticket 1234: the invoice page');
    await page.getByRole('button', { name: 'Impersonate' }).click();
    const dialog = page.locator('#admin-confirm');
    await dialog.waitFor();
    assert.match(await dialog.textContent() ?? '', new RegExp(`Sign in as ${user.email.replace(/[.+]/g, '\\$&')}`));
    await page.locator('#admin-confirm-yes').click();
    await page.waitForURL(`${t.url}/account`);
    const banner = page.locator('#impersonation-banner');
    await banner.waitFor();
    assert.match(await banner.textContent() ?? '', new RegExp(`Viewing as ${user.email.replace(/[.+]/g, '\\$&')}`));
    assert.equal(await page.locator('#account [data-field=email]').textContent(), user.email);
    assert.equal(await page.locator('#nav-admin').count(), 0, 'no admin pages in the account\'s session');
  });

  step('the banner is on every page, after a reload too; a credential change is refused and says so', async () => {
    const page = pages.admin;
    await page.reload();
    await page.locator('#impersonation-banner').waitFor();
    await page.locator('#nav-orgs').click();
    await page.waitForURL(`${t.url}/orgs`);
    await page.locator('#org-list').waitFor();
    assert.match(await page.locator('#org-list').textContent() ?? '', /Customer Rockets/);
    assert.equal(await page.locator('#impersonation-banner').count(), 1);
    await page.locator('#nav-settings').click();
    await page.waitForURL(`${t.url}/settings`);
    assert.equal(await page.locator('#impersonation-banner').count(), 1);
    await page.locator('#change-password-current-password').fill(PASSWORD);
    await page.locator('#change-password-password').fill('a brand new passphrase');
    await page.locator('#change-password-confirm-password').fill('a brand new passphrase');
    await page.locator('#change-password button[type=submit]').click();
    await page.locator('.toast', { hasText: /impersonated session/ }).waitFor();
  }, [/^admin response: POST \/api\/account\/change-password 403$/, /^admin console: Failed to load resource: .*403/]);

  step('"Stop" ends the impersonation and returns to the admin\'s own session, on the account\'s admin page', async () => {
    const page = pages.admin;
    await page.locator('#impersonation-stop').click();
    await page.waitForURL(`${t.url}/admin/accounts/${user.id}`);
    await page.locator('#admin-account').waitFor();
    assert.equal(await page.locator('#impersonation-banner').count(), 0);
    assert.equal(await page.locator('#nav-admin').count(), 1, 'the admin again');
    assert.ok(impersonatedSession, 'the stop was sent with the impersonated session\'s token');
    const me = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${impersonatedSession}` } });
    assert.equal(me.status, 401, 'its token is refused');
    const log = await t.client('GET', `/api/admin/audit-log?account-id=${user.id}`, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.deepEqual(log.body.entries.map((e: { action: string }) => e.action).slice(0, 2), ['admin.impersonation-stopped', 'admin.impersonation-started']);
  });

  step('the admin locks and unlocks the account through the dialog; the numbers and the audit log show', async () => {
    const page = pages.admin;
    await page.locator('#admin-lock-reason').fill('chargeback');
    await page.getByRole('button', { name: 'Lock account' }).click();
    await page.locator('#admin-confirm-yes').click();
    await page.locator('#admin-account [data-field=status]', { hasText: /locked.*chargeback/ }).waitFor();
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.locator('#admin-confirm-yes').click();
    await page.locator('#admin-account [data-field=status]', { hasText: 'active' }).waitFor();
    await page.locator('#admin-tab-stats').click();
    await page.locator('#admin-stats [data-field=accounts]').waitFor();
    assert.equal(await page.locator('#admin-stats [data-field=accounts]').textContent(), '2');
    await page.locator('#admin-tab-audit').click();
    await page.locator('#admin-audit tbody tr').first().waitFor();
    assert.equal(await page.locator('#admin-audit tbody tr').first().getAttribute('data-action'), 'admin.account-unlocked');
    await page.locator('#admin-tab-orgs').click();
    await page.locator('#admin-orgs tbody tr').first().waitFor();
    assert.ok(await page.locator('#admin-orgs tbody tr').count() >= 3);
  });
});
