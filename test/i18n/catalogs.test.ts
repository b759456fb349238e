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
import { argumentsOf, catalogReports, TRANSLATED_LOCALES } from '../../scripts/i18n/catalogs.js';

const reports = catalogReports(process.cwd());

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
      const wrong = reports.flatMap((r) => {
        if (r.used.length > 0 && !r.hasCatalogs) return [`${r.feature}: no catalogs`];
        const s = r.locales[locale];
        return [
          ...s.missing.map((id) => `${r.feature}: missing ${JSON.stringify(id)}`),
          ...s.unused.map((id) => `${r.feature}: unused ${JSON.stringify(id)}`),
          ...s.broken.map((id) => `${r.feature}: broken ${JSON.stringify(id)}`),
        ];
      });
      assert.deepEqual(wrong, []);
    });
  }

  it("declares every feature's catalogs in its module, so the server loads them", () => {
    const declared = new Set<Catalogs>([HTTP_MESSAGES, ...MODULES.flatMap((m) => (m.declares?.[MESSAGES_KEY] ?? []) as Catalogs[])]);
    const loaded = new Set([...declared].flatMap((c) => TRANSLATED_LOCALES.flatMap((l) => Object.keys(c[l] ?? {}))));
    const missing = reports.filter((r) => r.hasCatalogs && r.used.some((id) => !loaded.has(id))).map((r) => r.feature);
    assert.deepEqual(missing, []);
  });
});
