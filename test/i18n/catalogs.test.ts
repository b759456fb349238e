/**
 * The catalogs are complete (docs/i18n.md): every feature whose code has messages has a
 * catalog for each locale but English, holding every id its code uses and none it does not, each
 * message parsing as ICU MessageFormat with the arguments of its id; no message is built at run
 * time (it would have no id); and each catalog is declared by a module, so the server loads it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MESSAGES_KEY, type Catalogs } from '../../src/i18n/messages.js';
import { HTTP_MESSAGES } from '../../src/http/messages/index.js';
import { MODULES } from '../../src/system.js';
import { argumentsOf, catalogReports, clientCatalogReports, type FeatureReport, TRANSLATED_LOCALES } from '../../scripts/i18n/catalogs.js';
import { messagesOf } from '../../scripts/i18n/client-messages.js';
import { SCOPE_MESSAGE_IDS } from '../../src/client/oauth/scope-words.js';
import { SCOPE_WORDS } from '../../src/shared/oauth-scopes.js';
import { CATEGORY_MESSAGE_IDS } from '../../src/client/notifications/category-words.js';
import { BUILT_IN_CATEGORIES } from '../../src/notifications/kinds.js';

const reports = catalogReports(process.cwd());
const clientReports = clientCatalogReports(process.cwd());

/** what a locale's catalogs lack, hold unused or hold broken, feature by feature */
const wrongIn = (all: FeatureReport[], locale: (typeof TRANSLATED_LOCALES)[number]) =>
  all.flatMap((r) => {
    if (r.used.length > 0 && !r.hasCatalogs) return [`${r.feature}: no catalogs`];
    const s = r.locales[locale];
    return [
      ...s.missing.map((id) => `${r.feature}: missing ${JSON.stringify(id)}`),
      ...s.unused.map((id) => `${r.feature}: unused ${JSON.stringify(id)}`),
      ...s.broken.map((id) => `${r.feature}: broken ${JSON.stringify(id)}`),
    ];
  });

describe("the server's catalogs", () => {
  it('finds the messages of the code (the check reads what it should)', () => {
    const http = reports.find((r) => r.feature === 'http')!;
    for (const id of ['Authentication required', '{method} is not allowed here; use {allowed}', 'must be one of {allowed}', 'Invalid request body'])
      assert.ok(http.used.includes(id), id);
    assert.deepEqual(argumentsOf('{n, plural, one {# item} other {# items}} in {place}'), ['n', 'place']);
    assert.throws(() => argumentsOf('{n, plural, one {# item}'));
  });

  it('has no message built at run time', () => {
    assert.deepEqual(
      reports.flatMap((r) => r.problems),
      [],
    );
  });

  for (const locale of TRANSLATED_LOCALES) {
    it(`has every message in ${locale}, none unused, each parsing with its id's arguments`, () => {
      assert.deepEqual(wrongIn(reports, locale), []);
    });
  }

  it("declares every feature's catalogs in its module, so the server loads them", () => {
    const declared = new Set<Catalogs>([HTTP_MESSAGES, ...MODULES.flatMap((m) => (m.declares?.[MESSAGES_KEY] ?? []) as Catalogs[])]);
    const loaded = new Set([...declared].flatMap((c) => TRANSLATED_LOCALES.flatMap((l) => Object.keys(c[l] ?? {}))));
    const missing = reports.filter((r) => r.hasCatalogs && r.used.some((id) => !loaded.has(id))).map((r) => r.feature);
    assert.deepEqual(missing, []);
  });
});

describe("the browser client's catalogs", () => {
  it('finds the messages of the code: t(), msg() and rich() with a literal; a message built at run time or translated at module load is a problem', () => {
    const shell = clientReports.find((r) => r.feature === 'shell')!;
    for (const id of ['Skip to content', 'Log in']) assert.ok(shell.used.includes(id), id);
    const { uses, problems } = messagesOf(
      'x.tsx',
      [
        "const A = msg('Kept in a table');",
        "const B = t('Too early');",
        "function C(n: number) { return [t('{count, plural, one {# key} other {# keys}}', { count: n }), rich('See <0>this</0>', []), t(`Built $" + '{n}`)]; }',
      ].join('\n'),
      'x',
    );
    assert.deepEqual(
      uses.map((u) => u.id),
      ['Kept in a table', 'Too early', '{count, plural, one {# key} other {# keys}}', 'See <0>this</0>'],
    );
    assert.equal(problems.length, 2);
    assert.match(problems[0].text, /x\.tsx:2: t\(\) runs when the module loads/);
    assert.match(problems[1].text, /x\.tsx:3: a message built at run time/);
  });

  it("words the consent screen's scopes as the shared SCOPE_WORDS do (its ids are a copy the catalogs read)", () => {
    assert.deepEqual(SCOPE_MESSAGE_IDS, SCOPE_WORDS);
  });

  it('names the built-in notification categories as the server declares them (its ids are a copy the catalogs read)', () => {
    assert.deepEqual(CATEGORY_MESSAGE_IDS, Object.fromEntries(BUILT_IN_CATEGORIES.map((c) => [c.id, c.name])));
  });

  it('has no message built at run time, and none translated when its module loads', () => {
    assert.deepEqual(
      clientReports.flatMap((r) => r.problems),
      [],
    );
  });

  for (const locale of TRANSLATED_LOCALES) {
    it(`has every message in ${locale}, none unused, each parsing with its id's arguments`, () => {
      assert.deepEqual(wrongIn(clientReports, locale), []);
    });
  }
});
