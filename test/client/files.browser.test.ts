/**
 * Pictures in a real browser (Debian's Chromium through playwright-core; docs/files.md, "The
 * client's controls") on the disk driver: the owner chooses a PNG on the profile page (the
 * browser's own file input, reached with the keyboard), sees the progress reach its end and the
 * picture in the account menu's button; a forged file (text named .png) is refused beside the
 * control with the server's words; the picture is removed and the initials are back. The owner
 * uploads the organization's logo on its overview and it shows in the switcher, for a member too;
 * the members list shows the owner's avatar. axe-core passes on the profile with the control in
 * each state, and on the overview with the logo. No other console error or failing request.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { account, addMember, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { axeViolations, browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const browser = browserHarness('files');

const png = (color: string) =>
  sharp({ create: { width: 320, height: 320, channels: 3, background: color } })
    .png()
    .toBuffer();

/** The width the browser decoded the image at `selector` to: 0 until it has loaded. */
const loadedWidth = (page: Page, selector: string) =>
  page.locator(selector).evaluate((img) => (img instanceof HTMLImageElement && img.complete ? img.naturalWidth : 0));

const waitForLoaded = (page: Page, selector: string, width: number) =>
  page.waitForFunction(
    ([s, w]) => {
      const img = document.querySelector(s as string);
      return img instanceof HTMLImageElement && img.complete && img.naturalWidth === w;
    },
    [selector, width] as const,
  );

describe('Pictures in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let owner: TestAccount;
  let member: TestAccount;
  let orgId: string;
  let page: Page;
  let memberPage: Page;
  const step = browser.step;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, PUBLIC_DIR });
    owner = await account(t);
    member = await account(t);
    orgId = await createOrg(t, owner, 'Acme Rockets');
    await addMember(t, orgId, owner, member, 'member');
    await browser.launch();
    page = await browser.openPage('owner');
    memberPage = await browser.openPage('member');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  step('the profile offers a labelled file input, reached with the keyboard; axe-core passes', async () => {
    await logInThroughPage(page, t.url, owner, PASSWORD);
    await page.goto(`${t.url}/settings`);
    const input = page.getByLabel('Upload a picture');
    await input.waitFor();
    assert.equal(await input.getAttribute('type'), 'file');
    assert.equal(await input.getAttribute('accept'), 'image/png,image/jpeg,image/webp');
    assert.equal(await page.locator('#account-menu-button img').count(), 0, 'the initials, no picture yet');
    // from the page's title, the picture's input is the first control the Tab key reaches
    await page.locator('[data-page-title]').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'avatar-upload');
    assert.deepEqual(await axeViolations(page), []);
  });

  step('a PNG chosen uploads with its progress to the end, and the picture shows in the header and on the profile', async () => {
    const image = await png('#3366ff');
    await page.locator('#avatar-upload').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: image });
    await page.locator('#avatar-upload-status[data-phase=done]').waitFor();
    assert.equal(await page.locator('#avatar-upload-status').textContent(), 'me.png is uploaded.');
    const [value, max] = await page.locator('#avatar-upload-progress').evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max]);
    assert.equal(value, max, 'the progress reached its end');
    assert.equal(max, image.length, 'of the whole file');
    await waitForLoaded(page, '#account-menu-button img', 64);
    await waitForLoaded(page, 'img#avatar-current', 256);
    assert.equal(await page.locator('#avatar-current').getAttribute('alt'), 'Your picture');
    assert.deepEqual(await axeViolations(page), [], 'with the picture, the progress and the Remove button');
  });

  step('a forged file (text named .png) is refused beside the control, with the server’s words; the picture stays', async () => {
    await page
      .locator('#avatar-upload')
      .setInputFiles({ name: 'forged.png', mimeType: 'image/png', buffer: Buffer.from('this is text, not a picture\n'.repeat(20)) });
    const error = page.locator('#avatar-upload-error');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /The file cannot be kept: its bytes are not a known type, not the image\/png declared/);
    assert.equal(await error.getAttribute('role'), 'alert');
    const input = page.locator('#avatar-upload');
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    assert.match((await input.getAttribute('aria-describedby')) ?? '', /avatar-upload-error/);
    assert.equal(await page.locator('.toast').count(), 0, 'beside the control, not a toast');
    assert.equal(await loadedWidth(page, '#account-menu-button img'), 64, 'the picture before stays');
    assert.deepEqual(await axeViolations(page), [], 'with the refusal');
  }, [/^owner response: POST \/api\/uploads\/[0-9a-f-]+\/complete 400$/, /^owner console: Failed to load resource: .*400/]);

  step('an admin uploads the logo on the overview: it shows in the switcher, for a member too', async () => {
    await page.goto(`${t.url}/orgs/${orgId}`);
    await page.locator('#logo-upload').waitFor();
    assert.equal(await page.locator('#org-switcher-logo').count(), 0, 'no logo yet');
    await page.locator('#logo-upload').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: await png('#ff6633') });
    await page.locator('#logo-upload-status[data-phase=done]').waitFor();
    await waitForLoaded(page, 'img#org-switcher-logo', 64);
    await waitForLoaded(page, 'img#logo-current', 256);
    assert.deepEqual(await axeViolations(page), []);

    await logInThroughPage(memberPage, t.url, member, PASSWORD);
    await memberPage.locator('#org-switcher').selectOption(orgId);
    await memberPage.waitForURL(`${t.url}/orgs/${orgId}`);
    await waitForLoaded(memberPage, 'img#org-switcher-logo', 64);
    assert.equal(await memberPage.locator('#logo-upload').count(), 0, 'the logo is the admins’ to change');
  });

  step("the members list shows each member's avatar, or the initials", async () => {
    await memberPage.goto(`${t.url}/orgs/${orgId}/members`);
    await waitForLoaded(memberPage, `#members tr[data-email="${owner.email}"] img`, 64);
    assert.equal(await memberPage.locator(`#members tr[data-email="${member.email}"] [data-image=none]`).count(), 1, 'no picture: the initials');
  });

  step('Remove takes the picture away: the initials are back in the header', async () => {
    await page.goto(`${t.url}/settings`);
    await page.locator('#remove-avatar').click();
    await page.locator('#account-menu-button [data-image=none]').waitFor();
    assert.equal(await page.locator('#remove-avatar').count(), 0);
    assert.equal(await page.locator('#avatar-current').getAttribute('role'), 'img');
    assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${owner.token}` } })).body.avatar, null);
  });
});
