/**
 * Organizations end to end in a real browser (Debian's Chromium through playwright-core), each
 * person in a browser context of their own: A creates an organization and invites B; B opens
 * the emailed link without an account, signs up, verifies its address from the emailed link and
 * lands in the organization; A makes B admin; B invites C. Over the run no page shows a console
 * error or a failing request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../support/auth.js';
import { browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const browser = browserHarness('orgs');

describe('organizations in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  const pages: Record<'a' | 'b', Page> = {} as Record<'a' | 'b', Page>;

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    await browser.launch();
    for (const who of ['a', 'b'] as const) pages[who] = await browser.openPage(who);
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;

  /** The token of the newest message of `kind` to `to`, as the link in it carries it. */
  const mailedToken = async (to: string, kind: 'invitation' | 'verify-email') => {
    const [message] = await t.system.mail.mailbox.list({ to, kind });
    assert.ok(message, `a ${kind} message to ${to}`);
    const link = /https?:\/\/\S+\?token=([^\s"<&]+)/.exec(message.text ?? '');
    assert.ok(link, 'the message carries a link');
    return decodeURIComponent(link[1]);
  };

  const signUp = async (page: Page, name: string, email: string) => {
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password (8+ characters)').fill(password);
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
  };

  const emails = { a: uniqueEmail('alice'), b: uniqueEmail('bob'), c: uniqueEmail('carol') };
  const password = 'a long browser password';
  let orgId = '';
  const member = (page: Page, email: string) => page.locator(`#members tr[data-email="${email}"]`);

  step('A signs up and creates an organization', async () => {
    const a = pages.a;
    await a.goto(`${t.url}/sign-up`);
    await signUp(a, 'Alice', emails.a);
    await a.waitForURL(`${t.url}/account`);
    await a.locator('#nav-orgs').click();
    await a.waitForURL(`${t.url}/orgs`);
    await a.locator('#org-list [data-org-role=owner]').first().waitFor();
    await a.getByLabel('Name').fill('Acme Rockets');
    await a.getByRole('button', { name: 'Create organization' }).click();
    await a.waitForURL(/\/orgs\/[0-9a-f-]{36}$/);
    orgId = new URL(a.url()).pathname.split('/')[2];
    assert.equal(await a.locator('#org-name').textContent(), 'Acme Rockets');
    assert.equal(await a.locator('#org-role').textContent(), 'owner');
    assert.equal(await a.locator('#org-switcher').inputValue(), orgId);
    await a.locator('#org-members-link').click();
    await a.waitForURL(`${t.url}/orgs/${orgId}/members`);
    assert.equal(await member(a, emails.a).getAttribute('data-role'), 'owner');
  });

  step('A invites B as a member', async () => {
    const a = pages.a;
    await a.locator('#invite-email').fill(emails.b);
    await a.locator('#invite-role').selectOption('member');
    await a.getByRole('button', { name: 'Send invitation' }).click();
    await a.locator(`#invitations tr[data-email="${emails.b}"]`).waitFor();
    const [message] = await t.system.mail.mailbox.list({ to: emails.b, kind: 'invitation' });
    assert.match(message.subject, /Alice invited you to Acme Rockets/);
  });

  step('B opens the link without an account and signs up from it; the unverified address is refused', async () => {
    const b = pages.b;
    await b.goto(`${t.url}/invitations/accept?token=${encodeURIComponent(await mailedToken(emails.b, 'invitation'))}`);
    await b.locator('#invitation-status[data-status=needs-session]').waitFor();
    assert.equal(new URL(b.url()).search, '', 'the token left the address bar');
    await b.locator('#invitation-sign-up').click();
    await b.waitForURL(`${t.url}/sign-up`);
    await signUp(b, 'Bob', emails.b);
    // back to the invitation after sign-up: refused until the address is verified
    await b.waitForURL(`${t.url}/invitations/accept`);
    await b.locator('#invitation-status[data-status=unverified]').waitFor();
  }, [/^b response: POST \/api\/invitations\/accept 403$/, /^b console: Failed to load resource: .*403/]);

  step('B verifies its address from the emailed link and lands in the organization', async () => {
    const b = pages.b;
    await b.goto(`${t.url}/verify-email?token=${encodeURIComponent(await mailedToken(emails.b, 'verify-email'))}`);
    await b.locator('#token-status[data-status=done]').waitFor();
    await b.getByRole('link', { name: 'Go to your account' }).click();
    await b.waitForURL(`${t.url}/orgs/${orgId}`);
    assert.equal(await b.locator('#org-name').textContent(), 'Acme Rockets');
    assert.equal(await b.locator('#org-role').textContent(), 'member');
    assert.equal(await b.locator('#org-switcher').inputValue(), orgId);
    assert.equal(await b.evaluate(() => localStorage.getItem('current-org')), orgId);
    assert.equal(await b.evaluate(() => localStorage.getItem('pending-invitation')), null);
    await b.locator('#nav-org-members').click();
    await b.waitForURL(`${t.url}/orgs/${orgId}/members`);
    await member(b, emails.b).waitFor();
    assert.equal(await b.locator('#invite').count(), 0, 'a member sees no invitation form');
    assert.equal(await b.locator('#nav-org-api-keys').count(), 0, "nor the admins' pages in the navigation");
  });

  step('A sees B among the members and makes B admin', async () => {
    const a = pages.a;
    await a.reload();
    await member(a, emails.b).waitFor();
    assert.equal(await a.locator(`#invitations tr[data-email="${emails.b}"]`).count(), 0, 'the invitation is no longer pending');
    await member(a, emails.b).locator('.member-role-field select').selectOption('admin');
    await a.locator(`#members tr[data-email="${emails.b}"][data-role=admin]`).waitFor();
  });

  step('B, now admin, invites C', async () => {
    const b = pages.b;
    await b.reload();
    await b.locator('#org-role', { hasText: 'admin' }).waitFor();
    assert.deepEqual(await b.locator('#invite-role option').allTextContents(), ['member', 'admin'], 'an admin cannot invite an owner');
    await b.locator('#invite-email').fill(emails.c);
    await b.getByRole('button', { name: 'Send invitation' }).click();
    await b.locator(`#invitations tr[data-email="${emails.c}"]`).waitFor();
    const [message] = await t.system.mail.mailbox.list({ to: emails.c, kind: 'invitation' });
    assert.match(message.subject, /Bob invited you to Acme Rockets/);
  });

  step('an invitation opened by another account: no retry that cannot work, a log-out that keeps the invitation for the invited one', async () => {
    const a = pages.a;
    await a.goto(`${t.url}/invitations/accept?token=${encodeURIComponent(await mailedToken(emails.c, 'invitation'))}`);
    await a.locator('#invitation-status[data-status=mismatch]').waitFor();
    assert.equal(await a.locator('#invitation-retry').count(), 0, 'no "Try again"');
    await a.locator('#invitation-log-out').click();
    await a.waitForFunction(() => localStorage.getItem('pending-invitation') !== null);
    await a.goto(`${t.url}/invitations/accept`);
    await a.locator('#invitation-status[data-status=needs-session]').waitFor();
    // A again for the steps after this one, without C's invitation
    await a.evaluate(() => localStorage.removeItem('pending-invitation'));
    await logInThroughPage(a, t.url, { email: emails.a }, password);
  }, [/^a response: POST \/api\/invitations\/accept 403$/, /^a console: Failed to load resource: .*403/]);

  step("after a fresh log-in, an organization's page opened by its URL is that organization's: switcher and side navigation", async () => {
    // a browser context of its own: no organization remembered, so the personal one is the stored choice
    for (const [who, viewport] of [
      ['b-fresh', { width: 1280, height: 800 }],
      ['b-narrow', { width: 390, height: 844 }],
    ] as const) {
      const page = await browser.openPage(who, { context: { viewport } });
      await logInThroughPage(page, t.url, { email: emails.b }, password);
      assert.notEqual(await page.locator('#org-switcher').inputValue(), orgId, 'the personal organization is the choice before');
      await page.goto(`${t.url}/orgs/${orgId}/webhooks`);
      await page.locator('#org-switcher').waitFor();
      await page.locator('#webhooks-title').waitFor();
      await browser.networkQuiet(page);
      assert.equal(await page.locator('#org-switcher').inputValue(), orgId, `${who}: the switcher shows the organization of the URL`);
      if (viewport.width < 768) await page.locator('#menu-button').click();
      assert.equal(await page.locator('#nav-org-members').getAttribute('href'), `/orgs/${orgId}/members`, `${who}: Members is the URL's organization's`);
      assert.equal(await page.locator('#nav-org-webhooks').getAttribute('aria-current'), 'page', `${who}: the page's own link is current`);
      await page.locator('#nav-org-members').click();
      await page.waitForURL(`${t.url}/orgs/${orgId}/members`);
      await member(page, emails.b).waitFor();
      assert.equal(await page.locator('#org-switcher').inputValue(), orgId, `${who}: kept between the organization's pages`);
    }
  });

  step("an organization that is not the visitor's: the same answer on each of its pages, with a way back", async () => {
    const a = pages.a;
    const other = '00000000-0000-4000-8000-000000000000';
    for (const path of [`/orgs/${other}`, `/orgs/${other}/members`, `/orgs/${other}/api-keys`]) {
      await a.goto(`${t.url}${path}`);
      const alert = a.locator('#org-missing');
      await alert.waitFor();
      assert.match((await alert.textContent()) ?? '', /does not exist, or you are not a member/, path);
      await a.locator('#org-switcher').waitFor();
      assert.notEqual(await a.locator('#org-switcher').inputValue(), other, 'not selected in the switcher');
      assert.equal(await a.locator('#nav-org-members').getAttribute('href'), `/orgs/${orgId}/members`, 'the navigation keeps the chosen organization');
      await alert.getByRole('link', { name: 'Your organizations' }).click();
      await a.waitForURL(`${t.url}/orgs`);
    }
  }, [/response: GET \/api\/orgs\/0{8}-[0-9a-f-]+(\/api-keys)? 404$/, /console: Failed to load resource: the server responded with a status of 404/]);
});
