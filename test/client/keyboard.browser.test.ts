/**
 * The app without a mouse (WCAG 2.1.1): from the landing page a visitor signs up, creates an
 * organization, invites someone and opens billing with the keyboard alone (Tab, Shift+Tab,
 * typing, Enter), in Chromium. Every step also checks that the focus went where a keyboard user
 * expects: to the new page's title after a navigation.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { billingEnv } from '../billing/support.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';

const browser = browserHarness('keyboard');

describe('keyboard only: sign up, create an organization, invite someone, open billing', { skip: browser.skip }, () => {
  let t: TestSystem;
  let stripe: FakeStripe;
  let page: Page;

  before(async () => {
    stripe = await startFakeStripe();
    t = await startSystem(testDatabases()[0], billingEnv(stripe.url, { PUBLIC_DIR }));
    await browser.launch();
    page = await browser.openPage('page', { warnings: true });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await stripe?.close();
  });

  const step = browser.step;

  /** Presses Tab (Shift+Tab with `back`) until the focused element matches `selector`. */
  async function tabTo(selector: string, { back = false, max = 80 } = {}) {
    for (let i = 0; i < max; i++) {
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    }
    const at = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120));
    assert.fail(`${selector} was not reached with ${back ? 'Shift+' : ''}Tab; the focus is on ${at}`);
  }

  /** After Enter on a link: the URL, and the focus on the new page's title. */
  async function arrived(path: string | RegExp) {
    await page.waitForURL(typeof path === 'string' ? `${t.url}${path}` : path);
    await page.waitForFunction(() => document.activeElement?.hasAttribute('data-page-title'));
  }

  const email = uniqueEmail('keys-only');
  const password = 'typed without a mouse';
  let orgId = '';

  step('from the landing page to the sign-up form, and an account', async () => {
    await page.goto(`${t.url}/`);
    await page.locator('#product-pitch').waitFor();
    await tabTo('#hero-sign-up');
    await page.keyboard.press('Enter');
    await arrived('/sign-up');
    await tabTo('#sign-up-name');
    await page.keyboard.type('Kay Board');
    await tabTo('#sign-up-email');
    await page.keyboard.type(email);
    await tabTo('#sign-up-password');
    await page.keyboard.type(password);
    await tabTo('#sign-up-confirm-password');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${t.url}/account`);
    await page.locator('#account [data-field=email]', { hasText: email }).waitFor();
  });

  step('creates an organization', async () => {
    await tabTo('#dashboard-create-org');
    await page.keyboard.press('Enter');
    await arrived('/orgs');
    await tabTo('#create-org-name');
    await page.keyboard.type('Keyboard Co');
    await page.keyboard.press('Enter');
    await arrived(/\/orgs\/[0-9a-f-]{36}$/);
    orgId = new URL(page.url()).pathname.split('/')[2];
    assert.equal(await page.locator('#org-name').textContent(), 'Keyboard Co');
  });

  step('invites someone from the members page', async () => {
    await tabTo('#org-members-link');
    await page.keyboard.press('Enter');
    await arrived(`/orgs/${orgId}/members`);
    const invited = uniqueEmail('invited');
    await tabTo('#invite-email');
    await page.keyboard.type(invited);
    await tabTo('#invite-role');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.locator('#invite-role').inputValue(), 'admin', 'the role is chosen with the arrow keys');
    await tabTo('form#invite button[type=submit]');
    await page.keyboard.press('Enter');
    await page.locator(`#invitations tr[data-email="${invited}"]`).waitFor();
    const [message] = await t.system.mail.mailbox.list({ to: invited, kind: 'invitation' });
    assert.match(message.subject, /Keyboard Co/);
  });

  step('opens billing from the side navigation and reaches a plan', async () => {
    await tabTo('#nav-org-billing', { back: true });
    await page.keyboard.press('Enter');
    await arrived(`/orgs/${orgId}/billing`);
    await page.locator('#subscription[data-status=none]').waitFor();
    await tabTo('[data-plan=pro]');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Subscribe to Pro');
  });
});
