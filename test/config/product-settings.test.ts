/** PRODUCT_NAME and PRODUCT_PITCH (the product module, issue 31): optional, bounded, errors naming the variable; the page carries them. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { DEFAULT_PRODUCT_PITCH, productModule } from '../../src/product/module.js';
import { readCatalog } from '../../scripts/i18n/catalogs.js';
import { LOCALES } from '../../src/shared/locales.js';
import { loadAll, settingsOf } from '../support/settings.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

describe('product settings', () => {
  it("default to no name (the mail sender's name, else SaaS, is used) and the default pitch", () => {
    assert.deepEqual(settingsOf(productModule, { APP_ENV: 'test' }), { name: undefined, pitch: undefined });
    assert.deepEqual(settingsOf(productModule, { APP_ENV: 'test', PRODUCT_NAME: ' Rocketship ', PRODUCT_PITCH: 'Go.' }), { name: 'Rocketship', pitch: 'Go.' });
  });

  it("the default pitch is the site's message, translated in every catalog", () => {
    const site = readFileSync('src/client/site/pages.tsx', 'utf8');
    assert.ok(site.includes(`t('${DEFAULT_PRODUCT_PITCH}')`), 'the page writes the same text as its default');
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const translated = readCatalog(`src/client/site/messages/${locale}.json`)[DEFAULT_PRODUCT_PITCH];
      assert.ok(translated && translated !== DEFAULT_PRODUCT_PITCH, `${locale} translates it`);
    }
  });

  it('refuse values too long for a header and a landing page, naming the variable', () => {
    assert.throws(
      () => loadAll({ APP_ENV: 'test', PRODUCT_NAME: 'x'.repeat(61) }),
      (err: unknown) => err instanceof ConfigError && /PRODUCT_NAME/.test(err.message),
    );
    assert.throws(
      () => loadAll({ APP_ENV: 'test', PRODUCT_PITCH: 'x'.repeat(301) }),
      (err: unknown) => err instanceof ConfigError && /PRODUCT_PITCH/.test(err.message),
    );
  });

  describe('in the served page', () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(testDatabases()[0], { PRODUCT_NAME: 'Rocket <&> Co', PRODUCT_PITCH: 'Quotes "escaped"' });
    });
    after(() => t?.stop());

    it('writes the name and pitch as hidden fields, escaped', async () => {
      const res = await t.client('GET', '/', { headers: { accept: 'text/html' } });
      assert.match(res.text, /<input type="hidden" id="__product-name" value="Rocket &lt;&amp;> Co">/);
      assert.match(res.text, /<input type="hidden" id="__product-pitch" value="Quotes &quot;escaped&quot;">/);
    });
  });
});
