/**
 * The catalogs against the code (docs/i18n.md): for each feature, the ids its code uses
 * (server-messages.ts, client-messages.ts) and what each of its catalogs holds: the server's in
 * `src/<feature>/messages/<locale>.json`, the client's in `src/client/<feature>/messages/<locale>.json`.
 * Read by the catalog check in `npm test`, by `npm run i18n:status` and by the client's build.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, type Token } from '@messageformat/parser';
import { LOCALES, type Locale } from '../../src/shared/locales.js';
import { clientMessages } from './client-messages.js';
import { serverMessages, type MessageUse } from './server-messages.js';

export const TRANSLATED_LOCALES = LOCALES.filter((l): l is Exclude<Locale, 'en'> => l !== 'en');

export interface FeatureReport {
  feature: string;
  /** the ids the feature's code uses */
  used: string[];
  /** false: the feature has no catalogs yet */
  hasCatalogs: boolean;
  locales: Record<
    Exclude<Locale, 'en'>,
    {
      missing: string[];
      unused: string[];
      /** ids whose message does not parse, or names other arguments than the id */
      broken: string[];
      /** ids whose message is the English one, until someone translates it */
      untranslated: string[];
    }
  >;
  /** places the feature builds a message at run time */
  problems: string[];
}

/** The argument names of an ICU message (throws when it does not parse). */
export function argumentsOf(message: string): string[] {
  const names = new Set<string>();
  const walk = (tokens: Token[]) => {
    for (const t of tokens) {
      if (t.type === 'argument' || t.type === 'function' || t.type === 'plural' || t.type === 'select') names.add(t.arg);
      if (t.type === 'plural' || t.type === 'select') for (const c of t.cases) walk(c.tokens);
    }
  };
  walk(parse(message));
  return [...names].sort();
}

const sameArguments = (id: string, message: string) => {
  try {
    return argumentsOf(id).join() === argumentsOf(message).join();
  } catch {
    return false;
  }
};

/** A catalog file's messages (none when it does not exist). */
export function readCatalog(file: string): Record<string, string> {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
}

function reportsOf(base: string, uses: MessageUse[], problemsOf: (feature: string) => string[]): FeatureReport[] {
  const features = new Set([...uses.map((u) => u.feature), ...readdirSync(base).filter((f) => f !== 'client' && existsSync(join(base, f, 'messages')))]);
  return [...features].sort().map((feature) => {
    const used = [...new Set(uses.filter((u) => u.feature === feature).map((u) => u.id))].sort();
    const dir = join(base, feature, 'messages');
    const hasCatalogs = existsSync(dir);
    const locales = Object.fromEntries(
      TRANSLATED_LOCALES.map((locale) => {
        const catalog = hasCatalogs ? readCatalog(join(dir, `${locale}.json`)) : {};
        const ids = Object.keys(catalog);
        return [
          locale,
          {
            missing: used.filter((id) => !(id in catalog)),
            unused: ids.filter((id) => !used.includes(id)),
            broken: ids.filter((id) => typeof catalog[id] !== 'string' || !sameArguments(id, catalog[id])),
            untranslated: ids.filter((id) => catalog[id] === id),
          },
        ];
      }),
    ) as FeatureReport['locales'];
    return { feature, used, hasCatalogs, locales, problems: problemsOf(feature) };
  });
}

/** The server's features. */
export function catalogReports(root: string): FeatureReport[] {
  const { uses, problems } = serverMessages(root);
  return reportsOf(join(root, 'src'), uses, (feature) => problems.filter((p) => p.startsWith(`src/${feature}/`) || p.startsWith(`src/${feature}.ts`)));
}

/** The browser client's features (folders of src/client; the files beside app.ts are the shell's). */
export function clientCatalogReports(root: string): FeatureReport[] {
  const { uses, problems } = clientMessages(root);
  return reportsOf(join(root, 'src/client'), uses, (feature) => problems.filter((p) => p.feature === feature).map((p) => p.text));
}
