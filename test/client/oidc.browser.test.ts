/**
 * Sign-in with a provider in a real browser (Debian's Chromium through playwright-core) against
 * a real OpenID provider (oidc-provider) on 127.0.0.1, its login page filled in the browser: a
 * visitor clicks "Log in with Acme", signs in at the provider and is back on /account, signed
 * in; a cancelled sign-in shows a readable message on the log-in page; a password account links
 * Acme from its account page and unlinks it. No app page shows a console error or a failing
 * request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { testDatabases } from '../support/system.js';
import { startOidcWorld, type OidcWorld } from '../oidc/support.js';

const browser = browserHarness('oidc');

describe('provider sign-in in the browser', { skip: browser.skip }, () => {
  let w: OidcWorld;
  let page: Page;
  /** the app's API requests, `METHOD /path` */
  const apiCalls: string[] = [];

  before(async () => {
    w = await startOidcWorld(testDatabases()[0], { PUBLIC_DIR, OIDC_PROVIDERS: 'acme' });
    await browser.launch();
    // the app's pages and requests; the provider's own (its favicon, say) are not the app's business
    const ours = (url: string) => url.startsWith(w.appUrl);
    page = await browser.openPage('page', {
      own: ours,
      onRequest: (r) => {
        if (ours(r.url()) && new URL(r.url()).pathname.startsWith('/api/')) apiCalls.push(`${r.method()} ${new URL(r.url()).pathname}`);
      },
    });
  });
  after(async () => {
    await browser.close();
    await w?.stop();
  });

  const step = browser.step;

  /** At the provider's login page: the username, then Sign in (or Cancel). */
  const atProvider = async (login: string, button: 'Sign in' | 'Cancel' = 'Sign in') => {
    await page.waitForURL((url) => url.origin === w.op.issuer && url.pathname.startsWith('/interaction/'));
    await page.getByLabel('Username').fill(login);
    await page.getByRole('button', { name: button }).click();
  };

  /** Logged out at the provider too (its session would answer the next sign-in without a login page). */
  const signedOutEverywhere = async () => {
    await page.context().clearCookies();
    await page.goto(`${w.appUrl}/log-in`);
    // the page's own requests finish before the next navigation (which would abort them)
    await page.getByRole('link', { name: 'Log in with Acme' }).waitFor();
    await page.waitForLoadState('networkidle');
  };

  const zoe = uniqueEmail('zoe');

  step('a visitor signs in with Acme from the log-in page and lands on the account page, signed in', async () => {
    w.op.accounts.set('zoe', { email: zoe, emailVerified: true, name: 'Zoe Browser' });
    await page.goto(`${w.appUrl}/log-in`);
    await page.getByRole('link', { name: 'Log in with Acme' }).waitFor();
    assert.deepEqual(apiCalls, [], 'the buttons come with the page: a first visit asks nothing');
    await page.getByRole('link', { name: 'Log in with Acme' }).click();
    await atProvider('zoe');
    await page.waitForURL(`${w.appUrl}/account`);
    assert.equal(await page.locator('[data-field=email]').first().textContent(), zoe);
    await page.locator('#nav-security').click();
    await page.waitForURL(`${w.appUrl}/settings/security`);
    await page.locator('#identities tr[data-provider=acme]').waitFor();
    assert.equal(await page.locator('#identities tr[data-provider=acme] [data-field=email]').textContent(), zoe);
    assert.equal(await page.locator('#password-method').getAttribute('data-has-password'), 'false');
    assert.ok(await page.locator('#identities button.unlink').isDisabled(), 'the only way to sign in cannot be unlinked');
    await browser.networkQuiet(page);
    await page.locator('#account-menu-button').click();
    await page.locator('#log-out').click();
    await page.waitForURL(`${w.appUrl}/log-in`);
  });

  step('a cancelled sign-in comes back to the log-in page with a readable message', async () => {
    await signedOutEverywhere();
    await page.getByRole('link', { name: 'Log in with Acme' }).click();
    await atProvider('zoe', 'Cancel');
    await page.waitForURL(`${w.appUrl}/log-in`);
    await page.locator('#oauth-notice[data-code=access-denied]').waitFor();
    assert.equal(await page.locator('#oauth-notice').getAttribute('role'), 'alert');
    assert.match((await page.locator('#oauth-notice').textContent()) ?? '', /You cancelled signing in with Acme/);
  });

  step('a password account links Acme from its account page, then unlinks it', async () => {
    const email = uniqueEmail('yan');
    const password = 'a long browser password';
    await signedOutEverywhere();
    await page.goto(`${w.appUrl}/sign-up`);
    assert.equal(await page.getByRole('link', { name: 'Sign up with Acme' }).count(), 1);
    await page.getByLabel('Name').fill('Yan');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password (8+ characters)').fill(password);
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${w.appUrl}/account`);
    await page.locator('#nav-security').click();
    await page.locator('#password-method[data-has-password=true]').waitFor();
    // leaving the page aborts what it still loads (the organizations): a failed request, though a harmless one
    await browser.networkQuiet(page);
    // a provider is linked only to a verified address: the link from the email, opened in this browser (its session stays)
    await page.goto((await mailedLink(w.t.system, email, 'verify-email')).url.href);
    await page.getByText('Your email address is verified.').waitFor();
    await page.goto(`${w.appUrl}/settings/security`);
    await page.locator('#password-method[data-has-password=true]').waitFor();
    await browser.networkQuiet(page);
    w.op.accounts.set('yan-at-acme', { email: uniqueEmail('yan-elsewhere'), emailVerified: true });
    // linking adds a way in: the password confirms it
    await page.getByLabel('Your password (to link a provider)').fill(password);
    await page.getByRole('button', { name: 'Link Acme' }).click();
    await atProvider('yan-at-acme');
    await page.waitForURL(`${w.appUrl}/account`);
    await page.locator('#oauth-notice[data-code=linked]').waitFor();
    assert.equal(new URL(page.url()).search, '', 'the notice left the address bar');
    await page.locator('#oauth-notice').getByRole('link', { name: 'Your sign-in methods' }).click();
    await page.locator('#identities tr[data-provider=acme]').waitFor();
    await page.locator('#identities button.unlink').click();
    await page.locator('dialog[open] .confirm-ok').click();
    // an unlink is a sensitive change: the password again, in the re-authentication dialog
    await page.locator('#reauth-password').fill(password);
    await page.locator('#reauth-dialog .dialog-ok').click();
    await page.locator('#identities').waitFor({ state: 'detached' });
  }, [/identities\/[0-9a-f-]+ 403$/, /status of 403/]);
});
