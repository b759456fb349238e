/**
 * Webhooks end to end in a real browser (Debian's Chromium through playwright-core), against a
 * receiver started here that verifies with the `standardwebhooks` package: an owner opens the
 * Webhooks page from the organization's page (and finds it in the side navigation); a link-local
 * URL is refused with the error beside its field; an endpoint is added with the event picker and
 * its secret shown; a test is sent and verified with that secret, and the delivery log shows the
 * attempt's status code; the secret is hidden, revealed, rotated (confirmed in a modal <dialog>)
 * and both secrets verify; a failing delivery is retried from the log; the endpoint is deleted
 * (a canceled confirmation deletes nothing). No console error or unexpected failing request over
 * the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { receiver, waitFor, type Receiver } from '../webhooks/support.js';

const browser = browserHarness('webhooks');

describe('Webhooks in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;
  let hook: Receiver;

  before(async () => {
    hook = await receiver();
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_SCHEDULE: '0.05' });
    await browser.launch();
    page = await browser.openPage('page');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await hook?.close();
  });

  browser.step('an owner adds an endpoint, tests it, rotates its secret, retries a delivery and deletes it', async () => {
    const { email } = await signUp(t.client, uniqueEmail('hooks'));
    await page.goto(`${t.url}/log-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${t.url}/account`);
    await page.locator('#nav-orgs').click();
    await page.locator('#org-list a').first().click();
    await page.waitForURL(/\/orgs\/[0-9a-f-]{36}$/);
    const orgId = new URL(page.url()).pathname.split('/')[2];
    await page.locator('#org-webhooks-link').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/webhooks`);
    await page.locator('#no-webhooks').waitFor();
    assert.equal(await page.locator('#nav-org-webhooks').getAttribute('aria-current'), 'page', 'the side navigation has it, as the current page');

    // refused by the server: the message is beside the field
    await page.locator('#webhook-url').fill('http://169.254.169.254/latest/meta-data/');
    await page.getByLabel('All event types, those added later included').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const urlError = page.locator('#webhook-url-error');
    await urlError.waitFor();
    assert.match((await urlError.textContent()) ?? '', /link-local/);
    assert.equal(await page.locator('#webhook-url').getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#webhook-url').getAttribute('aria-describedby')) ?? '', /webhook-url-error/);

    await page.locator('#webhook-url').fill(`${hook.url}/browser`);
    await page.getByLabel('Description').fill('Browser test');
    await page.getByLabel('All event types, those added later included').uncheck();
    await page.getByLabel('member.updated').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const endpoint = page.locator('#webhooks li.webhook');
    await endpoint.waitFor();
    const secretBox = endpoint.locator('input[id^="webhook-secret-"]');
    const secret = await secretBox.inputValue();
    assert.match(secret, /^whsec_/);
    assert.match((await endpoint.locator('[data-field=events]').textContent()) ?? '', /member\.updated/);
    assert.equal(await page.locator('#webhook-url').inputValue(), '', 'the form is cleared');
    assert.equal(await page.locator('#webhook-url-error').count(), 0, 'and its error gone');
    hook.secrets.push(secret);

    await endpoint.locator('.send-test').click();
    await page.getByText('Test event sent').waitFor();
    await waitFor('the test delivery', () => hook.received.length === 1);
    assert.equal(hook.verified('/browser')[0].event.type, 'webhook.test');
    const row = endpoint.locator('#delivery-log tr[data-status="succeeded"]');
    await waitFor('the log to show the success', async () => {
      if ((await row.count()) === 0) await endpoint.locator('#delivery-filter').selectOption('succeeded');
      return (await row.count()) > 0;
    });
    assert.match((await row.first().textContent()) ?? '', /webhook\.test[\s\S]*204 in \d+ ms/);

    await endpoint.locator('.hide-secret').click();
    await secretBox.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret.slice(6)), 'the secret left the page');
    await endpoint.locator('.reveal-secret').click();
    assert.equal(await secretBox.inputValue(), secret);
    // rotating asks first, in a modal <dialog>
    const confirmation = page.locator('dialog[open]');
    await endpoint.locator('.rotate-secret').click();
    assert.match((await confirmation.textContent()) ?? '', /Make a new secret\?[\s\S]*24 hours/);
    await confirmation.locator('.confirm-ok').click();
    await page.getByText(/previous one signs too/).waitFor();
    await waitFor('the new secret on the page', async () => (await secretBox.inputValue()) !== secret);
    const rotated = await secretBox.inputValue();
    assert.notEqual(rotated, secret);
    hook.secrets.push(rotated);

    // a failing delivery, retried from the log once the receiver is back
    hook.answers = [{ status: 500, body: 'broken' }];
    await endpoint.locator('#delivery-filter').selectOption('');
    await endpoint.locator('.send-test').click();
    await waitFor('the failed attempts', () => hook.received.length >= 2);
    const failed = endpoint.locator('#delivery-log tr[data-status="failed"]');
    await waitFor(
      'the failure in the log',
      async () => {
        await endpoint.locator('#delivery-filter').selectOption('failed');
        return (await failed.count()) > 0;
      },
      60_000,
    );
    assert.match((await failed.first().textContent()) ?? '', /500 in \d+ ms \(unexpected-status\)/);
    const second = hook.received.at(-1)!;
    assert.deepEqual(second.verifiedWith.sort(), [secret, rotated].sort(), 'both secrets sign for 24 hours');
    hook.answers = [{ status: 204 }];
    await failed.first().locator('.retry-delivery').click();
    await page.getByText('Retry sent').waitFor();
    await waitFor('the retried delivery', async () => {
      await endpoint.locator('#delivery-filter').selectOption('succeeded');
      return (await endpoint.locator('#delivery-log tr[data-status="succeeded"]').count()) === 2;
    });

    await endpoint.locator('.delete-webhook').click();
    assert.match((await confirmation.textContent()) ?? '', /Delete the endpoint/);
    await confirmation.locator('.confirm-cancel').click();
    await confirmation.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('delete-webhook')), true, 'the focus is back on the button');
    assert.equal(await endpoint.count(), 1, 'a canceled confirmation deletes nothing');
    await endpoint.locator('.delete-webhook').click();
    await confirmation.locator('.confirm-ok').click();
    await page.getByText('Endpoint deleted').waitFor();
    await page.locator('#no-webhooks').waitFor();
    assert.equal(await page.locator('#nav-org-webhooks').getAttribute('aria-current'), 'page', 'the side navigation has it, as the current page');
  }, [/^page response: POST \/api\/orgs\/[0-9a-f-]+\/webhooks 400$/, /^page console: Failed to load resource: .*400/]);
});
