/**
 * The browser client in the reader's language (issue 56; docs/i18n.md), in Chromium against the
 * built app: a browser asking for German (`Accept-Language: de`) and an account without a
 * language of its own gets German pages, `<html lang="de">` from the server already; the public
 * pages' language menu switches to Spanish and the choice outlives a reload (the `locale`
 * cookie); an account set to Arabic reads right to left, mirrored (the side navigation on the
 * right, the menu button first from the right), axe-clean in both themes at both widths; the
 * profile's language setting changes the pages' language and the account's.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { readCatalog } from '../../scripts/i18n/catalogs.js';
import type { Locale } from '../../src/shared/locales.js';
import { logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { axeViolations, browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

/** A locale's client words, every feature's catalog merged: English id → text. */
function words(locale: Exclude<Locale, 'en'>): Record<string, string> {
  const base = join(process.cwd(), 'src/client');
  return Object.assign({}, ...readdirSync(base).map((feature) => readCatalog(join(base, feature, 'messages', `${locale}.json`))));
}
const de = words('de');
const es = words('es');
const ar = words('ar');

// both themes at both widths
const MODES = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' as const },
  { name: 'dark-wide', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'light-narrow', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];

const browser = browserHarness('i18n');

describe("the client in the reader's language", { skip: browser.skip }, () => {
  let t: TestSystem;

  before(async () => {
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR });
    await browser.launch();
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const html = (page: Page) => page.evaluate(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir }));
  const text = async (page: Page, selector: string) => (await page.locator(selector).first().textContent()) ?? '';

  browser.step('Accept-Language: de and no account setting: German pages, from the server on', async () => {
    const served = await fetch(`${t.url}/log-in`, { headers: { accept: 'text/html', 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } });
    const page0 = await served.text();
    assert.match(page0, /<html lang="de" dir="ltr">/);
    assert.match(page0, /<input type="hidden" id="__locale" value="de">/);
    // the German words are preloaded beside the entry, the other locales' never fetched
    assert.match(page0, /<link rel="modulepreload" crossorigin href="\/assets\/words-de-[\w-]+\.js">/);
    assert.doesNotMatch(page0, /words-(en|es|ar)-/);

    const fetched: string[] = [];
    const page = await browser.openPage('german', {
      context: { locale: 'de-DE' },
      warnings: true,
      onRequest: (r) => void fetched.push(new URL(r.url()).pathname),
    });
    await page.goto(`${t.url}/log-in`);
    await page.locator('form#log-in').waitFor();
    assert.deepEqual(await html(page), { lang: 'de', dir: 'ltr' });
    assert.ok(de['Log in'] && de['Log in'] !== 'Log in', 'the German catalog has its own words');
    assert.equal((await text(page, 'form#log-in button[type=submit]')).trim(), de['Log in']);
    assert.equal((await text(page, 'label[for=log-in-password]')).trim(), de.Password);
    assert.equal(await page.title(), `${de['Log in']} · SaaS`);
    assert.equal(await page.locator('#language-menu').inputValue(), 'de');
    const words = fetched.filter((p) => p.startsWith('/assets/words-'));
    assert.equal(words.length, 1, `one locale's words: ${words.join(', ')}`);
    assert.match(words[0], /^\/assets\/words-de-/);
  });

  browser.step('the language menu: Spanish, kept in the locale cookie across a reload', async () => {
    const page = await browser.openPage('visitor', { context: { locale: 'en-US' }, warnings: true });
    await page.goto(`${t.url}/sign-up`);
    await page.locator('form#sign-up').waitFor();
    assert.equal((await html(page)).lang, 'en');
    await page.locator('#language-menu').selectOption('es');
    await page.waitForFunction(() => document.documentElement.lang === 'es');
    assert.equal((await text(page, 'form#sign-up button[type=submit]')).trim(), es['Create account']);
    const cookies = await browser.contextOf('visitor').cookies();
    assert.equal(cookies.find((c) => c.name === 'locale')?.value, 'es');
    await page.reload();
    await page.locator('form#sign-up').waitFor();
    assert.deepEqual(await html(page), { lang: 'es', dir: 'ltr' });
    assert.equal((await text(page, 'form#sign-up button[type=submit]')).trim(), es['Create account']);
  });

  const arabic = { email: uniqueEmail('arabic'), password: PASSWORD };
  const arabicPages: Record<string, Page> = {};

  for (const mode of MODES) {
    browser.step(`an account set to Arabic: right to left, mirrored, axe-clean (${mode.name}, ${mode.viewport.width} px)`, async () => {
      if (mode === MODES[0]) {
        await signUp(t.client, arabic.email, arabic.password);
        const token = (await logIn(t.client, arabic.email)).body['access-token'] as string;
        const set = await t.client('PATCH', '/api/account/me', { headers: { authorization: `Bearer ${token}` }, body: { locale: 'ar' } });
        assert.equal(set.status, 200, set.text);
      }
      // a browser that asks for English: the account's language wins once signed in
      const page = await browser.openPage(`arabic-${mode.name}`, { context: { locale: 'en-US', viewport: mode.viewport, colorScheme: mode.colorScheme } });
      arabicPages[mode.name] = page;
      await page.goto(`${t.url}/log-in`);
      await page.locator('#log-in-email').fill(arabic.email);
      await page.locator('#log-in-password').fill(arabic.password);
      await page.locator('form#log-in button[type=submit]').click();
      await page.waitForURL(`${t.url}/account`);
      await page.waitForFunction(() => document.documentElement.dir === 'rtl');
      assert.equal((await html(page)).lang, 'ar');
      await page.locator('#account [data-field=email]').waitFor();
      assert.equal((await text(page, '[data-page-title]')).trim(), ar.Dashboard);

      const box = async (selector: string) => (await page.locator(selector).first().boundingBox())!;
      if (mode.viewport.width >= 768) {
        // the side navigation sits on the right of the page's content
        assert.ok((await box('#side-nav-panel')).x > (await box('#main')).x, 'the navigation is on the right');
      } else {
        // the header's first control (the menu button) is its rightmost
        assert.ok((await box('#menu-button')).x > mode.viewport.width / 2, 'the menu button is on the right');
      }
      for (const path of ['/account', '/settings']) {
        await page.goto(`${t.url}${path}`);
        await page.locator('[data-page-title]').waitFor();
        await page.waitForFunction(() => document.documentElement.dir === 'rtl');
        await browser.networkQuiet(page);
        assert.deepEqual(await axeViolations(page), [], `${path} in Arabic, ${mode.name}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${path} is no wider than the screen (${overflow} px over)`);
      }
    });
  }

  browser.step("the profile's language: German saved, the pages and the account's language follow", async () => {
    const page = arabicPages.light;
    await page.goto(`${t.url}/settings`);
    await page.locator('form#settings-locale').waitFor();
    assert.equal(await page.locator('#settings-locale-select').inputValue(), 'ar');
    await page.locator('#settings-locale-select').selectOption('de');
    await page.locator('form#settings-locale button[type=submit]').click();
    await page.waitForFunction(() => document.documentElement.lang === 'de' && document.documentElement.dir === 'ltr');
    assert.equal((await text(page, '[data-page-title]')).trim(), de.Profile);
    // the toast says it in the language just chosen, once its words are in
    await page.locator('[data-toast]', { hasText: de['Language saved'] }).waitFor();
    const me = await t.client('GET', '/api/account/me', {
      headers: { authorization: `Bearer ${(await logIn(t.client, arabic.email)).body['access-token']}` },
    });
    assert.equal(me.body.locale, 'de');
    const cookies = await browser.contextOf('arabic-light').cookies();
    assert.equal(cookies.find((c) => c.name === 'locale')?.value, 'de');
  });
});
