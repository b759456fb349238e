/**
 * Billing end to end in a real browser (Debian's Chromium through playwright-core), against a
 * local Stripe (test/billing/stripe-server.ts) whose checkout and portal sessions send the
 * browser straight back to the app's return URLs, as Stripe's pages do when the customer is done:
 * an owner opens the organization's billing page, cancels a checkout, subscribes to pro (the
 * subscription arrives through signed webhook events while the page waits for it), sees the usage
 * report its plan opens, and goes to the billing portal and back. Over the run no page shows a
 * console error or a failing request, except those a step provokes on purpose and names.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { account, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { billingEnv, deliver, stripeEvent, subscription } from '../billing/support.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';

const browser = browserHarness('billing');

describe('billing in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let stripe: FakeStripe;
  let page: Page;
  let owner: TestAccount;
  let orgId = '';
  /** a return URL made from APP_URL (port 0 in tests), pointed at this server */
  const here = (url: string) => {
    const u = new URL(url);
    return `${t.url}${u.pathname}${u.search}`;
  };

  before(async () => {
    stripe = await startFakeStripe();
    t = await startSystem(testDatabases()[0], billingEnv(stripe.url, { PUBLIC_DIR }));
    owner = await account(t);
    orgId = await createOrg(t, owner, 'Rocket Co');
    await browser.launch();
    page = await browser.openPage('page');
  });
  after(async () => {
    await browser.close();
    await t?.stop();
    await stripe?.close();
  });

  const step = browser.step;
  /** clicks and waits until the page has left for Stripe's page and come back (the URL alone cannot tell: it may be the same) */
  const clickAndReturn = async (selector: string) => {
    const left = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() });
    await page.locator(selector).click();
    await left;
    await page.waitForLoadState('load');
  };
  // the usage report is asked for only once the organization's plan includes it: no step allows its 402

  step('the owner goes from the organization page to its billing page: no plan, the plans offered, the report locked', async () => {
    await page.goto(`${t.url}/log-in`);
    await page.getByLabel('Email', { exact: true }).fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${t.url}/account`);
    await page.locator('#nav-orgs').click();
    await page.locator(`#org-list a[data-org="${orgId}"]`).click();
    await page.locator('#org-billing').click();
    await page.waitForURL(`${t.url}/orgs/${orgId}/billing`);
    await page.locator('#subscription[data-status=none]').waitFor();
    // the plans' names and prices from Stripe's Prices API
    assert.deepEqual(await page.locator('#plans [data-plan]').allTextContents(), ['Subscribe to Pro', 'Subscribe to Team']);
    assert.match((await page.locator('[data-plan-card=pro]').textContent()) ?? '', /\$12\s*per month/);
    await page.locator('#usage-locked').waitFor();
    assert.match((await page.locator('#usage-locked').textContent()) ?? '', /pro or team/);
    assert.equal(await page.locator('#manage-billing').count(), 0, 'no portal before a first checkout');
  });

  step("a checkout left on Stripe's page comes back canceled, and says so", async () => {
    stripe.checkoutUrl = (params) => here(params.cancel_url);
    await clickAndReturn('[data-plan=team]');
    await page.locator('#checkout-notice[data-notice=canceled]').waitFor();
    assert.equal(
      new URL(page.url()).pathname + new URL(page.url()).search,
      `/orgs/${orgId}/billing`,
      "the outcome left the address bar, on the organization's billing page",
    );
    assert.match((await page.locator('#checkout-notice').textContent()) ?? '', /canceled: nothing was charged/);
    assert.equal(stripe.requests.at(-1)?.params['line_items[0][price]'], 'price_team_2024');
  });

  step("a checkout paid on Stripe's page comes back, and the subscription shows once Stripe's events arrive", async () => {
    stripe.checkoutUrl = (params) => here(params.success_url);
    await clickAndReturn('[data-plan=pro]');
    await page.locator('#checkout-notice[data-notice=success]').waitFor();
    const end = Math.floor(Date.now() / 1000) + 14 * 86400;
    await deliver(
      t,
      stripeEvent('checkout.session.completed', {
        object: 'checkout.session',
        client_reference_id: orgId,
        customer: 'cus_browser',
        subscription: 'sub_browser',
      }),
    );
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({ id: 'sub_browser', customer: 'cus_browser', status: 'trialing', price: 'price_pro_2024', periodEnd: end, trialEnd: end }),
      ),
    );
    // the page looks again by itself
    await page.locator('#subscription[data-status=trialing]').waitFor();
    assert.equal(await page.locator('[data-field=plan]').textContent(), 'pro');
    assert.match((await page.locator('#checkout-notice').textContent()) ?? '', /your subscription is in place/);
    await page.locator('#usage [data-field=members]').waitFor();
    assert.match((await page.locator('#usage [data-field=members]').textContent()) ?? '', /^1 \(1 owner, 0 admins, 0 members\)/);
    assert.equal(await page.locator('#plans').count(), 0, 'no second checkout while the subscription runs');
  });

  step('Manage billing opens the portal, which comes back to the billing page; a cancellation at the period end shows', async () => {
    stripe.portalUrl = (params) => here(params.return_url);
    await clickAndReturn('#manage-billing');
    await page.locator('#subscription[data-status=trialing]').waitFor();
    assert.deepEqual(stripe.requests.at(-1)?.params, { customer: 'cus_browser', return_url: `${t.system.config.appUrl}/billing?org=${orgId}` });
    const end = Math.floor(Date.now() / 1000) + 14 * 86400;
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.updated',
        subscription({ id: 'sub_browser', customer: 'cus_browser', status: 'active', price: 'price_pro_2024', periodEnd: end, cancelAtPeriodEnd: true }),
      ),
    );
    await page.reload();
    await page.locator('#subscription[data-status=active]').waitFor();
    assert.match((await page.locator('[data-field=period-end]').textContent()) ?? '', /canceled, no renewal/);
  });
});
