/**
 * The client's words in the build (docs/i18n.md). At the start every id the client's code uses
 * (client-messages.ts) is numbered; each `t('English')`, `msg(…)` and `rich(…)` then carries its
 * number instead of its text, and `virtual:client-words/<locale>` is that locale's messages as
 * an array, compiled by Lingui (no parser in the browser): the English texts for `en`, the
 * feature catalogs' translations for the others (a missing one is its English text, which the
 * catalog check in `npm test` refuses). Each locale is its own chunk, loaded when chosen, so a
 * reader downloads one language's words. The dev server keeps the English ids and serves each
 * catalog by id, so a page edited in dev shows its new text at once.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import MagicString from 'magic-string';
import type { Plugin } from 'vite';
import { isLocale, type Locale } from '../../src/shared/locales.js';
import { readCatalog } from './catalogs.js';
import { clientFeature, clientMessages, messagesOf } from './client-messages.js';

const PREFIX = 'virtual:client-words/';

/** Every feature's catalog of a locale, merged: English id → translation. */
function translations(root: string, locale: Locale): Record<string, string> {
  if (locale === 'en') return {};
  const base = join(root, 'src/client');
  const merged: Record<string, string> = {};
  for (const feature of readdirSync(base)) Object.assign(merged, readCatalog(join(base, feature, 'messages', `${locale}.json`)));
  return merged;
}

export function clientWords(root: string): Plugin {
  let building = false;
  let index = new Map<string, number>();
  return {
    name: 'client-words',
    enforce: 'pre',
    // each locale's words are a chunk named for it (the build's report tells them from code)
    config: () => ({
      build: {
        rollupOptions: {
          output: {
            chunkFileNames: (chunk) => (chunk.facadeModuleId?.startsWith(`\0${PREFIX}`) ? 'assets/words-[name]-[hash].js' : 'assets/[name]-[hash].js'),
          },
        },
      },
    }),
    configResolved(config) {
      building = config.command === 'build';
    },
    buildStart() {
      const ids = [...new Set(clientMessages(root).uses.map((u) => u.id))].sort();
      index = new Map(ids.map((id, i) => [id, i]));
    },
    resolveId(id) {
      return id.startsWith(PREFIX) ? `\0${id}` : undefined;
    },
    load(id) {
      if (!id.startsWith(`\0${PREFIX}`)) return undefined;
      const locale = id.slice(PREFIX.length + 1);
      if (!isLocale(locale)) throw new Error(`no locale "${locale}" (src/shared/locales.ts)`);
      const words = translations(root, locale);
      if (!building) return `export default ${JSON.stringify(Object.fromEntries(Object.entries(words).map(([k, m]) => [k, compileMessage(m)])))};`;
      const messages = [...index.keys()].map((english) => compileMessage(words[english] ?? english));
      return `export default ${JSON.stringify(messages)};`;
    },
    transform(code, id) {
      if (!building || !/\/src\/client\/.*\.tsx?$/.test(id) || !/\b(t|msg|rich)\(/.test(code)) return undefined;
      const { uses } = messagesOf(id, code, clientFeature(root, id));
      if (uses.length === 0) return undefined;
      const s = new MagicString(code);
      for (const use of uses) {
        const n = index.get(use.id);
        if (n === undefined) throw new Error(`${relative(root, id)}: "${use.id}" is not among the ids read at the start`);
        s.overwrite(use.span[0], use.span[1], String(n));
      }
      return { code: s.toString(), map: s.generateMap({ hires: true, source: id }) };
    },
  };
}
