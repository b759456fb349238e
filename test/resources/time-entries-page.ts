/**
 * The generator test's Chromium step on the generated time entries page (test/resources/generator.test.ts):
 * signed in as an organization's owner, it lists, creates (a text file and an image uploaded, a
 * forged PNG refused beside its field), edits (only what changed is sent, the files kept),
 * shows a server's field error and deletes, axe-clean, and its OAuth scopes are offered to apps.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { transitJson } from '../../src/shared/codecs.js';
import { axeViolations } from '../support/browser.js';
import { withoutLinks } from '../support/resources.js';

/** What the page provokes on purpose: a refused edit, and the forged PNG refused at its completion. */
export const TIME_ENTRIES_PAGE_PROVOKES: RegExp[] = [
  /response: PATCH \/api\/orgs\/[0-9a-f-]+\/time-entries\/[0-9a-f-]+ 400$/,
  /console: Failed to load resource: the server responded with a status of 400 .*\/time-entries\//,
  // the receipt that is not a PNG, refused at its completion
  /response: POST \/api\/uploads\/[0-9a-f-]+\/complete 400$/,
  /console: Failed to load resource: the server responded with a status of 400 .*\/api\/uploads\/[0-9a-f-]+\/complete/,
];

/** The page at `base` for the organization `orgId`, its API read with the owner's `token`. */
export async function useTimeEntriesPage(page: Page, { base, orgId, token }: { base: string; orgId: string; token: string }): Promise<void> {
  await page.locator('#nav-org-time-entries').click();
  await page.waitForURL(`${base}/orgs/${orgId}/time-entries`);
  await page.locator('#no-time-entries').waitFor();
  assert.match((await page.title()) ?? '', /Time entries/);
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the empty list');

  await page.locator('#new-time-entry').click();
  await page.getByLabel('Title', { exact: true }).fill('Design review');
  await page.getByLabel('Notes', { exact: true }).fill('Agenda\nand minutes');
  await page.getByLabel('Hours', { exact: true }).fill('3');
  await page.getByLabel('Rate', { exact: true }).fill('120.50');
  await page.getByLabel('Billable', { exact: true }).check();
  await page.getByLabel('Day', { exact: true }).fill('2026-02-28');
  await page.getByLabel('Starts at', { exact: true }).fill('2026-02-28T09:30');
  await page.getByLabel('Status', { exact: true }).selectOption('submitted');
  // a file uploads once chosen; the server's refusal stands beside its field (bytes that are not the PNG declared)
  const agenda = Buffer.from('Agenda of the design review\n');
  await page.getByLabel('Attachment', { exact: true }).setInputFiles({ name: 'agenda.txt', mimeType: 'text/plain', buffer: agenda });
  await page.locator('#time-entry-form-attachment-status a', { hasText: 'agenda.txt' }).waitFor();
  await page
    .getByLabel('Receipt', { exact: true })
    .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: Buffer.from('<html>no image</html>'.padEnd(300)) });
  await page.locator('[data-error-for="receipt"]').waitFor();
  assert.match((await page.locator('[data-error-for="receipt"]').textContent()) ?? '', /not the image\/png declared/);
  assert.equal(await page.getByLabel('Receipt', { exact: true }).getAttribute('aria-invalid'), 'true');
  const receipt = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#36f' } })
    .png()
    .toBuffer();
  await page.getByLabel('Receipt', { exact: true }).setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: receipt });
  await page.locator('#time-entry-form-receipt-status a', { hasText: 'receipt.png' }).waitFor();
  assert.equal(await page.locator('[data-error-for="receipt"]').count(), 0, 'the refusal is gone');
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the form');
  await page.getByRole('button', { name: 'Create time entry' }).click();
  const row = page.locator('#time-entries tr[data-item]');
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /Design review.*3.*120\.50.*Yes.*2026-02-28.*submitted.*agenda\.txt.*receipt\.png/s);
  // the file's link serves its bytes; the image's thumbnail is its 64 px rendition
  const link = (await row.locator('td[data-field="attachment"] a').getAttribute('href')) ?? '';
  assert.deepEqual(Buffer.from(await (await fetch(link)).arrayBuffer()), agenda);
  const thumbnail = row.locator('td[data-field="receipt"] img');
  await page.waitForFunction((img) => (img as HTMLImageElement).complete, await thumbnail.elementHandle());
  assert.equal(await thumbnail.evaluate((img) => (img as HTMLImageElement).naturalWidth), 64);

  // the edit form starts at the item's values, every input type; a save sends only what changed
  await row.locator('.edit-item').click();
  const starts: Record<string, string | boolean> = {
    Title: 'Design review',
    Notes: 'Agenda\nand minutes',
    Hours: '3',
    Rate: '120.50',
    Billable: true,
    Day: '2026-02-28',
    'Starts at': '2026-02-28T09:30',
    Status: 'submitted',
  };
  for (const [label, value] of Object.entries(starts)) {
    const input = page.getByLabel(label, { exact: true });
    assert.equal(typeof value === 'boolean' ? await input.isChecked() : await input.inputValue(), value, label);
  }
  // a file field shows the file it holds
  assert.match((await page.locator('#time-entry-form-attachment-status').textContent()) ?? '', /agenda\.txt/);
  const stored = async () => {
    const res = await fetch(`${base}/api/orgs/${orgId}/time-entries`, { headers: { authorization: `Bearer ${token}` } });
    const [item] = ((await res.json()) as { 'time-entries': Array<Record<string, unknown>> })['time-entries'];
    return item;
  };
  const before = await stored();
  await page.getByLabel('Title', { exact: true }).fill('Design review, part 1');
  const [patch] = await Promise.all([page.waitForRequest((r) => r.method() === 'PATCH'), page.getByRole('button', { name: 'Save' }).click()]);
  assert.deepEqual(Object.keys(transitJson.decode(patch.postData() ?? '') as Record<string, unknown>), ['title'], 'only the changed field');
  await page.locator('#time-entries td[data-field="title"]', { hasText: 'Design review, part 1' }).waitFor();
  const after = await stored();
  // (a file's links are signed when answered)
  assert.deepEqual(
    { ...withoutLinks(after), title: undefined, 'updated-at': undefined },
    { ...withoutLinks(before), title: undefined, 'updated-at': undefined },
    'every other field kept, its files too',
  );

  // the server's field error beside its field (what the browser's own checks let through)
  await row.locator('.edit-item').click();
  await page.getByLabel('Rate', { exact: true }).fill('twelve');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('[data-error-for="rate"]').waitFor();
  assert.equal(await page.getByLabel('Rate', { exact: true }).getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Rate', { exact: true }).fill('99.90');
  await page.getByLabel('Title', { exact: true }).fill('Design review, part 2');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('#time-entries td[data-field="title"]', { hasText: 'Design review, part 2' }).waitFor();
  assert.deepEqual(await axeViolations(page), [], 'axe-core on the list');

  await row.locator('.delete-item').click();
  await page.locator('dialog[open] .confirm-ok').click();
  await page.locator('#no-time-entries').waitFor();

  // its OAuth scopes are offered to the organization's apps, in their words
  await page.goto(`${base}/orgs/${orgId}/oauth-apps`);
  const scopes = page.locator('#oauth-app-scopes');
  await scopes.waitFor();
  assert.match((await scopes.textContent()) ?? '', /time-entries:write: Create, change and delete your organizations' time entries/);
}
