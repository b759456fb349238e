/**
 * The client's counts in Arabic's six plural forms (docs/i18n.md): the catalogs' messages run
 * through the client's own formatter (src/client/i18n/words.ts, Lingui) for 0, 1, 2, 3, 11 and 100,
 * and through the same path in German and English, whose forms are two.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { readCatalog } from '../../scripts/i18n/catalogs.js';
import { t, useLocaleWords } from '../../src/client/i18n/words.js';
import type { Locale } from '../../src/shared/locales.js';

const MEMBERS = '{count, plural, one {# member} other {# members}}';
const SEATS = '{max, plural, one {Up to # seat} other {Up to # seats}}';
const TRIAL = '{days, plural, one {# day free} other {# days free}}';

/** the client's words of `locale`, as the unbuilt client takes them: English id → compiled message */
function use(locale: Locale, features: string[]) {
  const words = Object.assign({}, ...features.map((f) => readCatalog(`src/client/${f}/messages/${locale}.json`)));
  useLocaleWords(locale, Object.fromEntries(Object.entries(words).map(([id, m]) => [id, compileMessage(m as string)])));
}

const COUNTS = [0, 1, 2, 3, 11, 100];

describe("the client's plural forms", () => {
  it('gives Arabic its zero, one, two, few, many and other', () => {
    use('ar', ['orgs', 'billing']);
    assert.deepEqual(
      COUNTS.map((count) => t(MEMBERS, { count })),
      ['لا أعضاء', 'عضو واحد', 'عضوان', '3 أعضاء', '11 عضوًا', '100 عضو'],
    );
    assert.deepEqual(
      COUNTS.map((max) => t(SEATS, { max })),
      ['بلا مقاعد', 'حتى مقعد واحد', 'حتى مقعدين', 'حتى 3 مقاعد', 'حتى 11 مقعدًا', 'حتى 100 مقعد'],
    );
    assert.deepEqual(
      COUNTS.map((days) => t(TRIAL, { days })),
      ['بلا أيام مجانية', 'يوم واحد مجانًا', 'يومان مجانًا', '3 أيام مجانًا', '11 يومًا مجانًا', '100 يوم مجانًا'],
    );
  });

  it('gives German and English one and other', () => {
    use('de', ['orgs']);
    assert.deepEqual(
      COUNTS.map((count) => t(MEMBERS, { count })),
      ['0 Mitglieder', '1 Mitglied', '2 Mitglieder', '3 Mitglieder', '11 Mitglieder', '100 Mitglieder'],
    );
    useLocaleWords('en', {});
    assert.deepEqual(
      COUNTS.map((count) => t(MEMBERS, { count })),
      ['0 members', '1 member', '2 members', '3 members', '11 members', '100 members'],
    );
  });
});
