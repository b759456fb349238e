/**
 * The customer's audit trail in a real browser (Debian's Chromium through playwright-core), in
 * Berlin's time zone: the owner filters the audit log by action (the boxes ticked, the URL keeps
 * them over a reload, the focus stays on Apply) and by period (the datetime-local inputs read in the
 * reader's zone and sent in UTC: `from` inclusive, `to` exclusive; Back and Forward refill the form),
 * sees a refused period beside its field, and exports the selection as CSV, whose rows are the
 * entries shown. On the streams page, linked from the log, a
 * link-local URL is refused beside its field; an https stream to a receiver started here is added,
 * its secret shown once (copied, then gone), and the receiver verifies the batch that carries the
 * stream's own creation with it; the stream shows its status, lag and last delivery; a test is
 * delivered; pause and resume change its status; deletion asks first (a canceled confirmation keeps
 * it). A plain member is told the streams are for admins. axe-core finds nothing on either page. No
 * console error or failing request over the run, except those a step provokes and names.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { PASSWORD } from '../support/auth.js';
import { axeViolations, browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, createOrg, type TestAccount } from '../orgs/support.js';
import { receiver, waitFor, type Receiver } from '../webhooks/support.js';
import { parseCsv } from '../support/csv.js';

const browser = browserHarness('audit-streams');

describe('the audit trail in the browser: filters, export, streams', { skip: browser.skip }, () => {
  let t: TestSystem;
  let hook: Receiver;
  let page: Page;
  let memberPage: Page;
  let owner: TestAccount;
  let member: TestAccount;
  let orgId = '';
  /** the entries of June 2025 in Berlin (UTC+2), oldest first, and those just outside it */
  const june: string[] = [];
  const url = (path: string) => `${t.url}${path}`;
  const rowIds = () => page.locator('#audit-log tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-entry')));

  before(async () => {
    hook = await receiver();
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT: '3', AUDIT_STREAM_POLL_MS: '20' });
    [owner, member] = await Promise.all([account(t), account(t)]);
    orgId = await createOrg(t, owner, 'Trailed Rockets');
    await addMember(t, orgId, owner, member, 'member');
    const imported = (iso: string, n: number) => ({
      organization_id: orgId,
      action: 'test.imported',
      created_at: new Date(iso),
      details: JSON.stringify({ n }),
    });
    const rows = await t.system.database.db
      .insertInto('audit_entry')
      .values([
        imported('2025-05-31T21:59:59.000Z', 1), // 23:59:59 on 31 May in Berlin: before
        imported('2025-05-31T22:00:00.000Z', 2), // midnight on 1 June in Berlin: `from` is inclusive
        imported('2025-06-15T12:00:00.000Z', 3),
        imported('2025-06-30T22:00:00.000Z', 4), // midnight on 1 July in Berlin: `to` is exclusive
      ])
      .returning('id')
      .execute();
    // newest first, as the log shows them
    june.push(String(rows[2].id), String(rows[1].id));
    await browser.launch();
    page = await browser.openPage('owner', { context: { timezoneId: 'Europe/Berlin' } });
    await browser.contextOf('owner').grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    memberPage = await browser.openPage('member');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await hook?.close();
  });

  const step = browser.step;

  step('the owner filters the log by action; a reload keeps the filter', async () => {
    await logInThroughPage(page, t.url, owner, PASSWORD);
    await page.goto(url(`/orgs/${orgId}`));
    await page.locator('#org-plan').waitFor();
    await page.locator('#nav-org-audit').click();
    await page.waitForURL(url(`/orgs/${orgId}/audit-log`));
    await page.locator('#audit-log tbody tr').first().waitFor();
    const all = await rowIds();
    assert.ok(all.length >= 7, 'created, invited, accepted and the imported ones');

    await page.locator('#audit-filters-card summary').click();
    await page.getByRole('checkbox', { name: 'Invitation sent', exact: true }).check();
    await page.getByRole('checkbox', { name: 'Invitation accepted', exact: true }).check();
    await page.locator('#audit-apply').click();
    await page.waitForURL(/\?action=org\.invitation-sent&action=org\.invitation-accepted$/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'audit-apply', 'the focus stays on the button');
    const filtered = page.locator('#audit-log tbody tr');
    await waitFor('the filtered entries', async () => (await filtered.count()) === 2);
    assert.deepEqual(await filtered.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action'))), ['org.invitation-accepted', 'org.invitation-sent']);

    await page.reload();
    await page.locator('#audit-log tbody tr').first().waitFor();
    assert.deepEqual(await filtered.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action'))), ['org.invitation-accepted', 'org.invitation-sent']);
    assert.equal(await page.getByRole('checkbox', { name: 'Invitation sent', exact: true }).isChecked(), true, 'the form shows the filter');
    assert.equal(await page.getByRole('checkbox', { name: 'Member removed', exact: true }).isChecked(), false);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the filtered audit log');
  });

  step("filters by period in the reader's time zone, and exports the selection as CSV", async () => {
    await page.locator('#audit-clear').click();
    await page.waitForURL(url(`/orgs/${orgId}/audit-log`));
    await waitFor('every entry again', async () => (await rowIds()).length >= 7);
    await page.locator('#audit-filters-action').fill('test.imported');
    await page.locator('#audit-filters-from').fill('2025-06-01T00:00');
    await page.locator('#audit-filters-to').fill('2025-07-01T00:00');
    await page.locator('#audit-apply').click();
    await page.waitForURL((u) => u.searchParams.get('from') === '2025-05-31T22:00:00.000Z' && u.searchParams.get('to') === '2025-06-30T22:00:00.000Z');
    await waitFor('the period', async () => JSON.stringify(await rowIds()) === JSON.stringify(june));
    assert.equal(await page.locator('#audit-filters-from').inputValue(), '2025-06-01T00:00', 'shown in the reader’s zone');

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#audit-export-csv').click()]);
    assert.equal(download.suggestedFilename(), `audit-log-${orgId}-20250531T220000Z-20250630T220000Z.csv`);
    const csv = parseCsv(await readFile((await download.path())!, 'utf8'));
    assert.deepEqual(csv[0], [
      'id',
      'created-at',
      'action',
      'actor-type',
      'actor-id',
      'actor-email',
      'target-type',
      'target-id',
      'ip',
      'user-agent',
      'details',
    ]);
    assert.deepEqual(
      csv.slice(1).map((r) => r[0]),
      june,
      'the rows are the entries shown',
    );
    assert.deepEqual(
      csv.slice(1).map((r) => [r[2], JSON.parse(r[10]).n]),
      [
        ['test.imported', 3],
        ['test.imported', 2],
      ],
    );
    await page.getByText('Export downloaded').waitFor();
    assert.equal(await page.locator('#audit-export-csv').isDisabled(), false);

    // Back and Forward: the form follows the address
    await page.goBack();
    await page.waitForURL(url(`/orgs/${orgId}/audit-log`));
    await waitFor('the form emptied', async () => (await page.locator('#audit-filters-from').inputValue()) === '');
    await page.goForward();
    await waitFor('the form refilled', async () => (await page.locator('#audit-filters-from').inputValue()) === '2025-06-01T00:00');
    assert.equal(await page.locator('#audit-filters-action').inputValue(), 'test.imported');
    await waitFor('the period again', async () => JSON.stringify(await rowIds()) === JSON.stringify(june));
  });

  step('a period that ends before it starts is refused beside its field', async () => {
    await page.locator('#audit-filters-from').fill('2025-07-01T00:00');
    await page.locator('#audit-filters-to').fill('2025-06-01T00:00');
    await page.locator('#audit-apply').click();
    const error = page.locator('#audit-filters-to-error');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /later than/);
    assert.equal(await page.locator('#audit-filters-to').getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#audit-filters-to').getAttribute('aria-describedby')) ?? '', /audit-filters-to-error/);
    assert.equal(await page.locator('#audit-log').count(), 0, 'no entries for a refused filter');
  }, [/^owner response: GET \/api\/orgs\/[0-9a-f-]+\/audit-log 400$/, /^owner console: Failed to load resource: .*400/]);

  step('on the streams page a link-local URL is refused beside its field', async () => {
    await page.locator('#audit-streams-link').click();
    await page.waitForURL(url(`/orgs/${orgId}/audit-log/streams`));
    await page.locator('#no-streams').waitFor();
    await page.locator('#stream-kind').selectOption('https');
    await page.locator('#create-stream-url').fill('http://169.254.169.254/latest/meta-data/');
    await page.getByRole('button', { name: 'Add stream' }).click();
    const error = page.locator('#create-stream-url-error');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /link-local/);
    assert.equal(await page.locator('#create-stream-url').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#streams li.stream').count(), 0);
  }, [/^owner response: POST \/api\/orgs\/[0-9a-f-]+\/audit-log\/streams 400$/, /^owner console: Failed to load resource: .*400/]);

  step('an https stream: its secret shown once, its first batch verified with it, its lag and last delivery', async () => {
    await page.locator('#create-stream-url').fill(`${hook.url}/audit`);
    await page.getByRole('button', { name: 'Add stream' }).click();
    const secretBox = page.locator('#stream-secret-value');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    assert.match(secret, /^whsec_/);
    assert.match((await page.locator('#stream-secret').textContent()) ?? '', /not shown again/);
    assert.equal(await page.locator('#create-stream-url').inputValue(), '', 'the form is cleared');
    assert.equal(await page.locator('#create-stream-url-error').count(), 0, 'and its error gone');
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the streams page with the secret');
    await page.locator('#copy-stream-secret').click();
    await page.getByText('Secret copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);

    const stream = page.locator('#streams li.stream');
    await stream.waitFor();
    assert.equal(await stream.getAttribute('data-status'), 'active');
    assert.match((await stream.locator('[data-field=status]').textContent()) ?? '', /active/);
    assert.match((await stream.locator('[data-field=lag]').textContent()) ?? '', /^\d+ entr(y|ies)$/);
    assert.match((await stream.locator('h2').first().textContent()) ?? '', new RegExp(`${hook.url}/audit`));

    // the stream's own creation is its first entry: delivered, signed with the secret (checked
    // here: the batch may well have come before the secret was known to the receiver)
    const batch = await waitFor('the first batch', () => hook.received.find((d) => d.path === '/audit'), 15_000);
    assert.doesNotThrow(() => new Webhook(secret).verify(batch.body, batch.headers as Record<string, string>), 'signed with the secret shown');
    const actions = batch.body
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { action: string }).action);
    assert.equal(actions[0], 'audit-stream.created');
    await waitFor('the delivery on the page', async () => {
      await page.locator('#streams-refresh').click();
      await browser.networkQuiet(page);
      return (await stream.locator('[data-field=last-delivered-at]').textContent()) !== 'never';
    });
    assert.equal(await stream.locator('[data-field=lag]').textContent(), '0 entries');

    await page.locator('#close-stream-secret').click();
    await secretBox.waitFor({ state: 'detached' });
    await page.reload();
    await stream.waitFor();
    assert.ok(!(await page.content()).includes(secret.slice(6)), 'the secret is not shown again');
  });

  step('a test is delivered; pause and resume change the status; deletion asks first', async () => {
    const stream = page.locator('#streams li.stream');
    const before = hook.received.length;
    await stream.locator('.test-stream').click();
    const outcome = stream.locator('[data-status=delivered]');
    await outcome.waitFor();
    assert.match((await outcome.textContent()) ?? '', /^Test event delivered: 204 in \d+ ms$/);
    assert.ok(hook.received.length > before, 'the receiver got it');

    await stream.locator('.toggle-stream', { hasText: 'Pause' }).click();
    await page.getByText('Stream paused').waitFor();
    await page.locator('#streams li.stream[data-status=paused]').waitFor();
    assert.equal(await stream.locator('[data-field=status]').textContent(), 'paused');
    await stream.locator('.toggle-stream', { hasText: 'Resume' }).click();
    await page.getByText('Stream resumed').waitFor();
    await page.locator('#streams li.stream[data-status=active]').waitFor();
    assert.equal(await stream.locator('[data-field=status]').textContent(), 'active');

    const confirmation = page.locator('dialog[open]');
    await stream.locator('.delete-stream').click();
    assert.match((await confirmation.textContent()) ?? '', /Delete the stream to/);
    await confirmation.locator('.confirm-cancel').click();
    await confirmation.waitFor({ state: 'detached' });
    assert.equal(await stream.count(), 1, 'a canceled confirmation deletes nothing');
    await stream.locator('.delete-stream').click();
    await confirmation.locator('.confirm-ok').click();
    await page.getByText('Stream deleted').waitFor();
    await page.locator('#no-streams').waitFor();
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the empty streams page');
  });

  step('a plain member is told the streams are for admins', async () => {
    await logInThroughPage(memberPage, t.url, member, PASSWORD);
    await memberPage.goto(url(`/orgs/${orgId}/audit-log/streams`));
    const refusal = memberPage.locator('#streams-unavailable');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /admins and owners/);
    assert.equal(await memberPage.locator('#create-stream-card').count(), 0);
  }, [/^member response: GET \/api\/orgs\/[0-9a-f-]+\/audit-log\/streams 403$/, /^member console: Failed to load resource: .*403/]);
});
