/**
 * Webhooks end to end in a real browser (Debian's Chromium through playwright-core), against a
 * receiver started here that verifies with the `standardwebhooks` package: an owner opens the
 * Webhooks page from the organization's page; a link-local URL is refused with the error beside
 * its field; an endpoint is added with the event picker and its secret shown; a test is sent and
 * verified with that secret, and the delivery log shows the attempt's status code; the secret is
 * hidden, revealed, rotated (confirmed) and both secrets verify; a failing delivery is retried
 * from the log; the endpoint is deleted (confirmed). No console error or unexpected failing
 * request over the run.
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
    await page.getByLabel('Email').fill(email);
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

    // refused by the server: the message is beside the field
    await page.getByLabel('URL').fill('http://169.254.169.254/latest/meta-data/');
    await page.getByLabel('All event types, those added later included').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const urlError = page.locator('#webhook-url-error');
    await urlError.waitFor();
    assert.match(await urlError.textContent() ?? '', /link-local/);
    assert.equal(await page.getByLabel('URL').getAttribute('aria-invalid'), 'true');

    await page.getByLabel('URL').fill(`${hook.url}/browser`);
    await page.getByLabel('Description').fill('Browser test');
    await page.getByLabel('All event types, those added later included').uncheck();
    await page.getByLabel('member.updated').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const endpoint = page.locator('#webhooks li.webhook');
    await endpoint.waitFor();
    const secretBox = endpoint.locator('input.webhook-secret');
    const secret = await secretBox.inputValue();
    assert.match(secret, /^whsec_/);
    assert.match(await endpoint.textContent() ?? '', /member\.updated/);
    hook.secrets.push(secret);

    await endpoint.locator('.send-test').click();
    await page.getByText('Test event sent').waitFor();
    await waitFor('the test delivery', () => hook.received.length === 1);
    assert.equal(hook.verified('/browser')[0].event.type, 'webhook.test');
    const row = endpoint.locator('table.delivery-log tr[data-status="succeeded"]');
    await waitFor('the log to show the success', async () => {
      if (await row.count() === 0) await endpoint.locator('#delivery-filter').selectOption('succeeded');
      return (await row.count()) > 0;
    });
    assert.match(await row.first().textContent() ?? '', /webhook\.test[\s\S]*204 in \d+ ms/);

    await endpoint.locator('.hide-secret').click();
    await secretBox.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret.slice(6)), 'the secret left the page');
    await endpoint.locator('.reveal-secret').click();
    assert.equal(await endpoint.locator('input.webhook-secret').inputValue(), secret);
    page.once('dialog', (d) => void d.accept());
    await endpoint.locator('.rotate-secret').click();
    await page.getByText(/previous one signs too/).waitFor();
    const rotated = await endpoint.locator('input.webhook-secret').inputValue();
    assert.notEqual(rotated, secret);
    hook.secrets.push(rotated);

    // a failing delivery, retried from the log once the receiver is back
    hook.answers = [{ status: 500, body: 'broken' }];
    await endpoint.locator('#delivery-filter').selectOption('');
    await endpoint.locator('.send-test').click();
    await waitFor('the failed attempts', () => hook.received.length >= 2);
    const failed = endpoint.locator('table.delivery-log tr[data-status="failed"]');
    await waitFor('the failure in the log', async () => {
      await endpoint.locator('#delivery-filter').selectOption('failed');
      return (await failed.count()) > 0;
    }, 60_000);
    assert.match(await failed.first().textContent() ?? '', /500 in \d+ ms \(unexpected-status\)/);
    const second = hook.received.at(-1)!;
    assert.deepEqual(second.verifiedWith.sort(), [secret, rotated].sort(), 'both secrets sign for 24 hours');
    hook.answers = [{ status: 204 }];
    await failed.first().locator('.retry-delivery').click();
    await page.getByText('Retry sent').waitFor();
    await waitFor('the retried delivery', async () => {
      await endpoint.locator('#delivery-filter').selectOption('succeeded');
      return (await endpoint.locator('table.delivery-log tr[data-status="succeeded"]').count()) === 2;
    });

    page.once('dialog', (d) => {
      assert.match(d.message(), /Delete the endpoint/);
      void d.accept();
    });
    await endpoint.locator('.delete-webhook').click();
    await page.locator('#no-webhooks').waitFor();
  }, [/^page response: POST \/api\/orgs\/[0-9a-f-]+\/webhooks 400$/, /^page console: Failed to load resource: .*400/]);
});
