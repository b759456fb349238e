/**
 * Notifications in a real browser (Debian's Chromium through playwright-core; docs/client.md,
 * "Notifications"): an owner signed in, the bell counts a notification caused elsewhere (another
 * account accepts an invitation to the owner's organization) without a reload, its accessible name
 * and the polite live region say so; the panel opens with the keyboard, Escape closes it with the
 * focus back on the bell, Mark all read zeroes the count (on the server too); following a
 * notification reads it and opens its page; the Notifications page lists them, filters the unread
 * ones, marks one read, deletes one and shows a new one as it comes; the preferences grid saves a
 * change that the server then has, and its critical category is fixed (the server refuses it
 * anyway); an organization's admin saves the members' defaults; log-out closes the stream.
 * axe-core on the open panel and on each page; no console error or failing request over the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { notificationsModule } from '../../src/notifications/module.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { axeViolations, browserHarness, logInThroughPage, NOTIFICATION_STREAM_PATH, PUBLIC_DIR } from '../support/browser.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const browser = browserHarness('notifications');

describe('notifications in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let owner: TestAccount;
  let orgId = '';
  let page: Page;
  /** the stream requests the page made, with the Last-Event-ID each sent */
  const streams: Array<string | undefined> = [];
  const step = browser.step;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, PUBLIC_DIR });
    owner = await account(t);
    orgId = await createOrg(t, owner, 'Acme Rockets');
    await browser.launch();
    page = await browser.openPage('owner', {
      onRequest: (r) => {
        if (new URL(r.url()).pathname === NOTIFICATION_STREAM_PATH) streams.push(r.headers()['last-event-id']);
      },
    });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const bell = () => page.locator('#notifications-button');
  const bellSays = (unread: number) => page.locator(`#notifications-button[aria-label="Notifications, ${unread} unread"]`).waitFor();
  /** another account joins the organization: a member-joined notification for the owner */
  async function someoneJoins(): Promise<TestAccount> {
    const member = await account(t);
    await addMember(t, orgId, owner, member, 'member');
    return member;
  }
  const live = () => t.system.services(notificationsModule).streams.size;
  let unreadAtStart = 0;
  /** how many the owner has, the server says */
  const total = async () => (await as(t, owner, 'GET', '/api/notifications?limit=100')).body.notifications.length as number;

  step('the owner logs in: the bell counts what is unread (the sign-in from this new browser among it), and one stream opens after the newest', async () => {
    await logInThroughPage(page, t.url, owner, PASSWORD);
    for (let i = 0; i < 40 && live() === 0; i++) await sleep(50);
    assert.equal(live(), 1, 'one stream for the tab');
    const mine = (await as(t, owner, 'GET', '/api/notifications')).body;
    assert.ok(mine['unread-count'] >= 1, JSON.stringify(mine));
    assert.ok(
      mine.notifications.some((n: { kind: string }) => n.kind === 'security-notice'),
      'a sign-in from a new browser is told',
    );
    await bellSays(mine['unread-count']);
    assert.equal(await page.locator('#notifications-badge').textContent(), String(mine['unread-count']));
    assert.deepEqual(streams, [mine.notifications[0].cursor], 'Last-Event-ID: the newest the list had');
    unreadAtStart = mine['unread-count'];
  });

  step('someone joins: the bell counts it without a reload, and the live region says it', async () => {
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));
    const member = await someoneJoins();
    await bellSays(unreadAtStart + 1);
    assert.equal(await page.locator('#notifications-badge').textContent(), String(unreadAtStart + 1));
    const said = page.locator('#notifications-announcer');
    assert.equal(await said.getAttribute('aria-live'), 'polite');
    await page.waitForFunction(() => /^New notification: .+ joined Acme Rockets$/.test(document.getElementById('notifications-announcer')?.textContent ?? ''));
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, 'no reload');
    const [joined] = (await as(t, owner, 'GET', '/api/notifications')).body.notifications;
    assert.match(joined.body, new RegExp(member.email.replace(/[.+]/g, '\\$&')));
  });

  step('the panel opens with the keyboard and lists it; Escape closes it and the focus is back on the bell', async () => {
    await bell().focus();
    await page.keyboard.press('Enter');
    const panel = page.locator('#notifications-panel');
    await panel.waitFor();
    assert.equal(await bell().getAttribute('aria-expanded'), 'true');
    const items = page.locator('#notifications-latest li[data-notification]');
    assert.equal(await items.count(), unreadAtStart + 1);
    assert.equal(await page.locator('#notifications-latest li[data-read=false]').count(), unreadAtStart + 1);
    assert.match((await items.first().textContent()) ?? '', /^Unread: .+ joined Acme Rockets/);
    assert.deepEqual(await axeViolations(page), [], 'axe-core with the panel open');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'notifications-mark-all', 'Mark all read comes first in the panel');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'hidden' });
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'notifications-button');
    assert.equal(await bell().getAttribute('aria-expanded'), 'false');
  });

  step('Mark all read zeroes the count, here and on the server', async () => {
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await bellSays(0);
    assert.equal(await page.locator('#notifications-badge').count(), 0);
    assert.equal(await page.locator('#notifications-latest li[data-read=false]').count(), 0);
    assert.equal(await page.locator('#notifications-mark-all').getAttribute('aria-disabled'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'notifications-mark-all', 'the focus stays where it was');
    assert.equal((await as(t, owner, 'GET', '/api/notifications')).body['unread-count'], 0);
    await page.keyboard.press('Escape');
  });

  step("following a notification from the panel reads it and opens the organization's members", async () => {
    await someoneJoins();
    await bellSays(1);
    await bell().click();
    await page.locator('#notifications-latest li[data-read=false] a').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/members`);
    await page.locator('#members tr[data-email]').first().waitFor();
    await bellSays(0);
    assert.equal(await page.locator('#notifications-panel').isHidden(), true, 'the panel closed');
    assert.equal((await as(t, owner, 'GET', '/api/notifications?unread=true')).body.notifications.length, 0);
  });

  step('the Notifications page: listed, the unread filter, a new one on top as it comes, mark read, delete; axe-core finds nothing', async () => {
    await bell().click();
    await page.locator('#notifications-see-all').click();
    await page.waitForURL(`${t.url}/notifications`);
    const rows = page.locator('#notification-list li[data-notification]');
    const all = await total();
    await rows.nth(all - 1).waitFor();
    assert.equal(await rows.count(), all);
    assert.deepEqual(new Set(await rows.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-read')))), new Set(['true']), 'all read by now');
    await page.locator('#notifications-filter [data-filter=unread]').click();
    await page.locator('#no-notifications').waitFor();
    assert.match((await page.locator('#no-notifications').textContent()) ?? '', /all caught up/);
    assert.equal(await page.locator('#notifications-filter [data-filter=unread]').getAttribute('aria-pressed'), 'true');

    const member = await someoneJoins();
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1, 'the new one, unread, while the filter is on');
    assert.match((await rows.first().textContent()) ?? '', new RegExp(member.email.replace(/[.+]/g, '\\$&')));
    await bellSays(1);
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the Notifications page');
    await rows.first().locator('.mark-read').click();
    await page.locator('#notification-list li[data-read=true]').waitFor();
    await bellSays(0);

    await page.locator('#notifications-filter [data-filter=all]').click();
    await rows.nth(all).waitFor();
    const oldest = await rows.last().getAttribute('data-notification');
    await rows.last().locator('.delete-notification').click();
    await page.locator(`#notification-list li[data-notification="${oldest}"]`).waitFor({ state: 'detached' });
    assert.equal(await rows.count(), all);
    assert.equal(await total(), all);
    assert.ok(!(await as(t, owner, 'GET', '/api/notifications')).body.notifications.some((n: { id: string }) => n.id === oldest), 'deleted on the server');
  });

  step('the preferences grid saves a change the server then has; the critical category is fixed, and the server refuses it anyway', async () => {
    await page.locator('#nav-notification-preferences').click();
    await page.waitForURL(`${t.url}/settings/notifications`);
    const security = page.locator('#preference-grid tr[data-category=security]');
    await security.waitFor();
    assert.equal(await security.getAttribute('data-critical'), 'true');
    assert.equal(await page.getByRole('switch', { name: 'Security in the app' }).isDisabled(), true);
    assert.equal(await page.getByRole('switch', { name: 'Security in the app' }).isChecked(), true);
    assert.equal(await page.getByLabel('Security by email').isDisabled(), true);
    assert.equal(await page.getByLabel('Security by email').inputValue(), 'immediately');
    assert.match((await page.locator('#critical-note').textContent()) ?? '', /Security is critical: always shown and emailed immediately/);
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the preferences grid');

    await page.getByLabel('Organizations by email').selectOption('daily');
    // the switch with the keyboard: Space toggles it
    await page.getByRole('switch', { name: 'Billing in the app' }).focus();
    await page.keyboard.press('Space');
    assert.equal(await page.getByRole('switch', { name: 'Billing in the app' }).isChecked(), false);
    await page.locator('#save-preferences').click();
    await page.locator('#preferences-notice[data-status=success]').waitFor();
    assert.equal(await page.locator('#preferences-notice').textContent(), 'Saved.');
    const saved = (await as(t, owner, 'GET', '/api/account/notification-preferences')).body.categories as Array<{
      category: string;
      'in-app': boolean;
      email: string;
    }>;
    assert.deepEqual(
      saved.filter((c) => c.category !== 'security').map((c) => [c.category, c['in-app'], c.email]),
      [
        ['organizations', true, 'daily'],
        ['billing', false, 'immediately'],
        ['developers', true, 'immediately'],
      ],
    );
    const refused = await as(t, owner, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'security', email: 'off' }] });
    assert.equal(refused.status, 400);

    await page.reload();
    await page.getByLabel('Organizations by email').waitFor();
    assert.equal(await page.getByLabel('Organizations by email').inputValue(), 'daily', 'kept');
    assert.equal(await page.getByRole('switch', { name: 'Billing in the app' }).isChecked(), false);
    await page.locator('#reset-preferences').click();
    await page.locator('#preferences-notice[data-status=success]').waitFor();
    assert.equal(await page.getByLabel('Organizations by email').inputValue(), 'immediately', 'back to the default');
  });

  step("an organization's admin saves its members' defaults", async () => {
    // the side navigation's organization links are the current organization's: Acme chosen in the switcher
    await page.locator('#org-switcher').selectOption(orgId);
    await page.waitForURL(`${t.url}/orgs/${orgId}`);
    await page.locator('#nav-org-notifications').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/notifications`);
    await page.getByRole('heading', { name: 'Notification defaults of Acme Rockets' }).waitFor();
    await page.getByLabel('Developers by email').selectOption('off');
    await page.locator('#save-preferences').click();
    await page.locator('#preferences-notice[data-status=success]').waitFor();
    const defaults = (await as(t, owner, 'GET', `/api/orgs/${orgId}/notification-preferences`)).body.categories as Array<{ category: string; email: string }>;
    assert.equal(defaults.find((c) => c.category === 'developers')?.email, 'off');
    assert.equal((await as(t, owner, 'GET', '/api/account/notification-preferences')).body.categories[3].email, 'immediately', "the owner's own unchanged");
    await browser.networkQuiet(page);
    assert.deepEqual(await axeViolations(page), [], "axe-core on the organization's defaults");
  });

  step('the stream came back after every page load with the last cursor, and log-out closes it at once', async () => {
    const [newest] = (await as(t, owner, 'GET', '/api/notifications?limit=1')).body.notifications;
    assert.equal(streams.at(-1), newest.cursor, 'the reload started after the newest');
    assert.equal(live(), 1);
    await page.locator('#account-menu-button').click();
    await page.locator('#log-out').click();
    await page.waitForURL(`${t.url}/log-in`);
    for (let i = 0; i < 40 && live() > 0; i++) await sleep(50);
    assert.equal(live(), 0, 'no stream left open');
    const opened = streams.length;
    await sleep(1500);
    assert.equal(streams.length, opened, 'and none opened again');
  });
});
