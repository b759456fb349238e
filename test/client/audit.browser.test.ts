/**
 * The audit log page in a real browser (Debian's Chromium through playwright-core): a plain
 * member gets no link and, going to the page's address, is told the log is for admins; the owner
 * changes the member's role, follows the link from the organization page and sees "Member role
 * changed" on top, by the owner, on the member; older entries come with "Load more", and an action
 * without a readable name shows as it is. Over the run no page shows a console error or a failing
 * request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../support/auth.js';
import { browserHarness, logInThroughPage, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, createOrg, type TestAccount } from '../orgs/support.js';

/** more than one page of the client (50) */
const OLDER_ENTRIES = 55;
const browser = browserHarness('audit');

describe('the audit log in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  const pages: Record<'owner' | 'member', Page> = {} as Record<'owner' | 'member', Page>;
  let owner: TestAccount;
  let member: TestAccount;
  let orgId: string;

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    [owner, member] = await Promise.all([account(t), account(t)]);
    orgId = await createOrg(t, owner, 'Audited Rockets');
    // older entries first, so the ones the steps cause are on top
    await t.system.database.db
      .insertInto('audit_entry')
      .values(Array.from({ length: OLDER_ENTRIES }, (_, n) => ({ organization_id: orgId, action: 'test.imported', details: JSON.stringify({ n }) })))
      .execute();
    await addMember(t, orgId, owner, member, 'member');
    await browser.launch();
    for (const who of ['owner', 'member'] as const) pages[who] = await browser.openPage(who);
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;

  const logInAs = (page: Page, who: TestAccount) => logInThroughPage(page, t.url, who, PASSWORD);

  /** From the navigation to the organization's page and its members, as a user clicks. */
  const openOrg = async (page: Page) => {
    await page.locator('#nav-orgs').click();
    await page.locator(`#org-list a[data-org="${orgId}"]`).click();
    await page.waitForURL(`${t.url}/orgs/${orgId}`);
    await page.locator('#org-plan').waitFor();
  };
  const openMembers = async (page: Page) => {
    await page.locator('#org-members-link').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/members`);
    await page.locator('#members tbody tr').first().waitFor();
  };

  step('a plain member sees no link to the audit log, and its address answers that it is for admins', async () => {
    const page = pages.member;
    await logInAs(page, member);
    await openOrg(page);
    await page.locator('#org-role', { hasText: 'member' }).waitFor();
    assert.equal(await page.locator('#audit-log-link').count(), 0);
    assert.equal(await page.locator('#nav-org-audit').count(), 0, 'nor in the side navigation');
    await page.goto(`${t.url}/orgs/${orgId}/audit-log`);
    await page.locator('#audit-forbidden').waitFor();
    assert.match((await page.locator('#audit-forbidden').textContent()) ?? '', /admins and owners/);
    assert.equal(await page.locator('#audit-log').count(), 0);
  }, [/^member response: GET \/api\/orgs\/[0-9a-f-]+\/audit-log 403$/, /^member console: Failed to load resource: .*403/]);

  step("the owner changes the member's role and finds it on top of the audit log", async () => {
    const page = pages.owner;
    await logInAs(page, owner);
    await openOrg(page);
    await openMembers(page);
    const row = page.locator(`#members tr[data-email="${member.email}"]`);
    await row.locator('.member-role-field select').selectOption('admin');
    await page.locator(`#members tr[data-email="${member.email}"][data-role=admin]`).waitFor();
    await page.locator('#nav-org-audit').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/audit-log`);
    const top = page.locator('#audit-log tbody tr').first();
    await top.waitFor();
    assert.equal(await top.getAttribute('data-action'), 'org.member-role-changed');
    assert.match((await top.locator('[data-field=action]').textContent()) ?? '', /^Member role changed/);
    assert.match((await top.locator('[data-field=action]').textContent()) ?? '', /role: admin · previous-role: member/);
    assert.equal(await top.locator('[data-field=actor]').textContent(), owner.email);
    assert.equal(await top.locator('[data-field=target]').textContent(), member.email);
    assert.equal(await top.locator('[data-field=ip]').textContent(), '127.0.0.1');
    assert.match((await page.locator('#audit-title').textContent()) ?? '', /Audited Rockets/);
  });

  step('older entries come with "Load more"; an action without a readable name shows as it is', async () => {
    const page = pages.owner;
    const rows = page.locator('#audit-log tbody tr');
    assert.equal(await rows.count(), 50);
    await page.locator('#audit-more').click();
    // 55 imported + created, invited, accepted, role changed
    await page.locator(`#audit-log tbody tr:nth-child(${OLDER_ENTRIES + 4})`).waitFor();
    assert.equal(await rows.count(), OLDER_ENTRIES + 4);
    assert.equal(await page.locator('#audit-more').count(), 0, 'no more to load');
    const last = rows.last();
    assert.equal(await last.getAttribute('data-action'), 'org.created');
    assert.match((await last.locator('[data-field=action]').textContent()) ?? '', /^Organization created/);
    const imported = page.locator('#audit-log tbody tr[data-action="test.imported"]').first();
    assert.match((await imported.locator('[data-field=action]').textContent()) ?? '', /^test\.imported/);
    assert.equal(await imported.locator('[data-field=actor]').textContent(), '—');
  });
});
