/**
 * Sign-in with a provider in a real browser (Debian's Chromium through playwright-core) against
 * a real OpenID provider (oidc-provider) on 127.0.0.1, its login page filled in the browser: a
 * visitor clicks "Log in with Acme", signs in at the provider and is back on /account, signed
 * in; a cancelled sign-in shows a readable message on the log-in page; a password account links
 * Acme from its account page and unlinks it. No app page shows a console error or a failing
 * request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { testDatabases } from '../support/system.js';
import { startOidcWorld, type OidcWorld } from '../oidc/support.js';

const CHROMIUM = '/usr/bin/chromium';
const PUBLIC_DIR = fileURLToPath(new URL('../../public', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));

if (process.env.CI === 'true' && !existsSync(CHROMIUM)) throw new Error(`CI=true requires Chromium at ${CHROMIUM}`);

describe('provider sign-in in the browser', { skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed' }, () => {
  let w: OidcWorld;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  /** the app's API requests, `METHOD /path` */
  const apiCalls: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${PUBLIC_DIR}/index.html`), 'the client is built (npm run build:client)');
    w = await startOidcWorld(testDatabases()[0], { PUBLIC_DIR, OIDC_PROVIDERS: 'acme' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await (await browser.newContext()).newPage();
    // the app's pages and requests; the provider's own (its favicon, say) are not the app's business
    const ours = (url: string) => url.startsWith(w.appUrl);
    page.on('response', (r) => { if (r.status() >= 400 && ours(r.url())) problems.push(`response: ${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`); });
    page.on('requestfailed', (r) => { if (ours(r.url())) problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`); });
    page.on('console', (m) => { if (m.type() === 'error' && ours(page.url())) problems.push(`console: ${m.text()} (${m.location().url})`); });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('request', (r) => { if (ours(r.url()) && new URL(r.url()).pathname.startsWith('/api/')) apiCalls.push(`${r.method()} ${new URL(r.url()).pathname}`); });
  });
  after(async () => {
    await browser?.close();
    await w?.stop();
  });

  const step = (name: string, fn: () => Promise<void>, provokes: RegExp[] = []) => it(name, async () => {
    problems.length = 0;
    try {
      await fn();
      await sleep(100); // late console messages of the step's last request
      const unexpected = problems.filter((p) => !provokes.some((re) => re.test(p)));
      assert.deepEqual(unexpected, [], 'no console error and no failing request');
    } catch (err) {
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}/oidc-${name.replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => undefined);
      throw err;
    }
  });

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
    await page.locator('#identities tr[data-provider=acme]').waitFor();
    assert.equal(await page.locator('#identities tr[data-provider=acme] [data-field=email]').textContent(), zoe);
    assert.equal(await page.locator('#password-method').getAttribute('data-has-password'), 'false');
    assert.ok(await page.locator('#identities button.unlink').isDisabled(), 'the only way to sign in cannot be unlinked');
    await page.waitForLoadState('networkidle');
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
    assert.match(await page.locator('#oauth-notice').textContent() ?? '', /You cancelled signing in with Acme/);
  });

  step('a password account links Acme from its account page, then unlinks it', async () => {
    const email = uniqueEmail('yan');
    const password = 'a long browser password';
    await signedOutEverywhere();
    await page.goto(`${w.appUrl}/sign-up`);
    assert.equal(await page.getByRole('link', { name: 'Sign up with Acme' }).count(), 1);
    await page.getByLabel('Name').fill('Yan');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password (8+ characters)').fill(password);
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${w.appUrl}/account`);
    await page.locator('#password-method[data-has-password=true]').waitFor();
    // leaving the page aborts what it still loads (the organizations): a failed request, though a harmless one
    await page.waitForLoadState('networkidle');
    w.op.accounts.set('yan-at-acme', { email: uniqueEmail('yan-elsewhere'), emailVerified: true });
    await page.getByRole('button', { name: 'Link Acme' }).click();
    await atProvider('yan-at-acme');
    await page.waitForURL(`${w.appUrl}/account`);
    await page.locator('#oauth-notice[data-code=linked]').waitFor();
    assert.equal(new URL(page.url()).search, '', 'the notice left the address bar');
    await page.locator('#identities tr[data-provider=acme]').waitFor();
    await page.locator('#identities button.unlink').click();
    await page.locator('#identities').waitFor({ state: 'detached' });
  });
});
