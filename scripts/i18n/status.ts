/**
 * `npm run i18n:status`: what is left to translate (docs/i18n.md). For each feature of the server
 * and of the browser client, and each locale:
 * ids its code uses that the catalog lacks, ids still in English (a generated resource's, until
 * someone translates them), ids no code uses, and broken messages; then the places that build a
 * message at run time. Exits 1 when anything but English text is left.
 */
import { catalogReports, clientCatalogReports, type FeatureReport } from './catalogs.js';

let wrong = 0;
function report(side: string, reports: FeatureReport[]): void {
  for (const r of reports) {
    const lines: string[] = [];
    if (!r.hasCatalogs && r.used.length > 0) lines.push(`  no catalogs yet: ${r.used.length} messages`);
    for (const [locale, s] of Object.entries(r.locales)) {
      if (!r.hasCatalogs) break;
      const parts = [
        s.missing.length && `${s.missing.length} missing`,
        s.untranslated.length && `${s.untranslated.length} in English`,
        s.unused.length && `${s.unused.length} unused`,
        s.broken.length && `${s.broken.length} broken`,
      ].filter(Boolean);
      if (parts.length) lines.push(`  ${locale}: ${parts.join(', ')}`);
      for (const id of [...s.missing, ...s.unused, ...s.broken]) lines.push(`    ${locale} ${JSON.stringify(id)}`);
      for (const id of s.untranslated) lines.push(`    ${locale} (English) ${JSON.stringify(id)}`);
      wrong += s.missing.length + s.unused.length + s.broken.length;
    }
    for (const p of r.problems) lines.push(`  ${p}`);
    wrong += r.problems.length + (!r.hasCatalogs && r.used.length > 0 ? 1 : 0);
    if (lines.length) console.log(`${side} ${r.feature}\n${lines.join('\n')}`);
  }
  const total = reports.reduce((n, r) => n + r.used.length, 0);
  console.log(`${total} ${side} messages in ${reports.length} features`);
}
report('server', catalogReports(process.cwd()));
report('client', clientCatalogReports(process.cwd()));
console.log(wrong === 0 ? 'every catalog complete' : `${wrong} things to fix`);
process.exitCode = wrong === 0 ? 0 : 1;
