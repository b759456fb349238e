/**
 * The account lifecycle end to end in Chromium (issue 17, "Done when"): sign up -> open the
 * verification link from the mailbox -> verified; forgot password -> link -> new password -> the
 * old session in a second browser context is logged out (its notification stream ends with the
 * session: it lands on log-in by itself); change email -> confirm from the new address; end a
 * session from another context; delete the account -> can't log in. No console
 * errors except where a step provokes a refused request on purpose.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import type { MailKind } from '../../src/mail/index.js';

/** a refused request the step provokes on purpose: Chromium also logs each 401 as a console error */
const REFUSED_401 = [/^[AB] response: \w+ \/api\/\S+ 401$/, /^[AB] console: .*status of 401/];

for (const db of testDatabases()) {
  const browser = browserHarness(`lifecycle-${db.name}`);
  describe(`account lifecycle in the browser on ${db.name}`, { skip: browser.skip }, () => {
    let t: TestSystem;
    let a: Page;
    let b: Page;

    before(async () => {
      t = await startSystem(db, { PUBLIC_DIR });
      await browser.launch();
      a = await browser.openPage('A');
      b = await browser.openPage('B');
    });
    after(async () => {
      await browser.close();
      await t?.stop();
    });

    const step = browser.step;

    /** The emailed link, pointed at this server (APP_URL's port is 0 in tests). */
    const link = async (to: string, kind: MailKind) => {
      const { url } = await mailedLink(t.system, to, kind);
      return `${t.url}${url.pathname}${url.search}`;
    };

    const logInAs = async (page: Page, email: string, password: string) => {
      await page.goto(`${t.url}/log-in`);
      await page.locator('#log-in-email').fill(email);
      await page.locator('#log-in-password').fill(password);
      await page.locator('form#log-in button[type=submit]').click();
      await page.waitForURL(`${t.url}/account`);
    };

    /**
     * A page load without a session asks to restore one (POST /api/account/refresh) and gets
     * 401: the client's start-up check, not a failure (docs/client.md).
     */
    const ANONYMOUS_RESTORE = [/^A response: POST \/api\/account\/refresh 401$/, /^A console: .*status of 401.*\/api\/account\/refresh\)$/];

    const email = uniqueEmail('lifecycle');
    const newEmail = uniqueEmail('moved');
    const password = 'first browser password';
    const newPassword = 'second browser password';

    step(
      'signs up, opens the verification link from the mailbox, and is verified',
      async () => {
        await a.goto(`${t.url}/sign-up`);
        await a.locator('#sign-up-name').fill('Life Cycle');
        await a.locator('#sign-up-email').fill(email);
        await a.locator('#sign-up-password').fill(password);
        await a.locator('#sign-up-confirm-password').fill(password);
        await a.locator('form#sign-up button[type=submit]').click();
        await a.waitForURL(`${t.url}/account`);
        assert.equal(await a.locator('[data-field=email-verified]').textContent(), 'no');
        await a.locator('#verify-banner').waitFor();

        await a.goto(await link(email, 'verify-email'));
        await a.locator('#token-status[data-status=done]').waitFor();
        assert.ok(!a.url().includes('token='), 'the token leaves the address bar');
        await a.goto(`${t.url}/account`);
        await a.locator('[data-field=email-verified]').waitFor();
        assert.equal(await a.locator('[data-field=email-verified]').textContent(), 'yes');
        assert.equal(await a.locator('#verify-banner').count(), 0);
      },
      ANONYMOUS_RESTORE,
    );

    step(
      'resets a forgotten password from the link; the old session in another context is logged out',
      async () => {
        await logInAs(b, email, password);
        await a.locator('#account-menu-button').click();
        await a.locator('#log-out').click();
        await a.waitForURL(`${t.url}/log-in`);
        await a.locator('#forgot-password-link').click();
        await a.waitForURL(`${t.url}/forgot-password`);
        await a.locator('#forgot-password-email').fill(email);
        await a.locator('form#forgot-password button[type=submit]').click();
        await a.locator('#forgot-password-sent').waitFor();

        await a.goto(await link(email, 'reset-password'));
        await a.locator('#reset-password-password').fill(newPassword);
        await a.locator('#reset-password-confirm-password').fill(newPassword);
        await a.locator('form#reset-password button[type=submit]').click();
        await a.waitForURL(`${t.url}/log-in`);

        // B's session died with the reset: its notification stream ends with it within a second, the
        // refresh B then asks for is refused, and B lands on log-in without a click
        await b.waitForURL(`${t.url}/log-in`);
        await logInAs(a, email, newPassword);
      },
      REFUSED_401,
    );

    step('changes the email and confirms it from the new address', async () => {
      await a.goto(`${t.url}/settings`);
      await a.locator('#change-email-new-email').fill(newEmail);
      await a.locator('#change-email-password').fill(newPassword);
      await a.locator('form#change-email button[type=submit]').click();
      await a.locator('#change-email-sent').waitFor();
      assert.equal((await t.system.mail.mailbox.list({ to: email, kind: 'email-changed-notice' })).length, 1, 'the old address is told');

      await a.goto(await link(newEmail, 'confirm-email-change'));
      await a.locator('#token-status[data-status=done]').waitFor();
      await a.goto(`${t.url}/account`);
      await a.locator('[data-field=email]').waitFor();
      assert.equal(await a.locator('[data-field=email]').textContent(), newEmail);
      assert.equal(await a.locator('[data-field=email-verified]').textContent(), 'yes');
    });

    step(
      'ends a session from another context',
      async () => {
        await logInAs(b, newEmail, newPassword);
        await a.goto(`${t.url}/settings/sessions`);
        const others = a.locator('table#sessions tr[data-session]:not([data-current=true])');
        await others.first().waitFor();
        assert.equal(await others.count(), 1);
        assert.equal(await a.locator('tr[data-current=true]').count(), 1);
        await others.first().locator('button.end-session').click();
        await others.first().waitFor({ state: 'detached' });

        // B's stream ends with its session, as above: B is on log-in by itself
        await b.waitForURL(`${t.url}/log-in`);
        await a.locator('#nav-account').click();
        await a.locator('[data-field=email]').waitFor();
      },
      REFUSED_401,
    );

    step(
      "deletes the account, after which it can't log in",
      async () => {
        await a.goto(`${t.url}/settings/delete`);
        await a.locator('#delete-account-confirm-email').fill(newEmail);
        await a.locator('#delete-account-password').fill(newPassword);
        await a.getByRole('button', { name: 'Delete my account' }).click();
        await a.waitForURL(`${t.url}/log-in`);

        await a.locator('#log-in-email').fill(newEmail);
        await a.locator('#log-in-password').fill(newPassword);
        await a.locator('form#log-in button[type=submit]').click();
        await a.locator('.toast.error').waitFor();
        assert.equal(new URL(a.url()).pathname, '/log-in');
        const rows = await t.system.database.db.selectFrom('account').select('id').where('email', 'in', [email, newEmail]).execute();
        assert.equal(rows.length, 0);
      },
      REFUSED_401,
    );
  });
}
