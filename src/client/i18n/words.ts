/**
 * The client's words in the reader's language (docs/i18n.md): `t('English text')` where a text
 * goes, `t('{count, plural, one {# key} other {# keys}}', { count })` for one with values, and
 * `msg('…')` for a text kept in a table (a route's title) that is translated where it shows.
 *
 * The English text is the id, as on the server. The build (scripts/i18n/vite-plugin.ts) turns
 * each id into a number and each locale's catalog into an array of messages compiled by Lingui,
 * loaded when the locale is chosen: a reader downloads one language's words, never the others'.
 * Messages with values are formatted by Lingui's runtime (ICU MessageFormat: Arabic's six plural
 * forms). Unbuilt (unit tests, `npm run dev` before a catalog loads) the id is its own English
 * message, compiled when first used.
 */
import { setupI18n } from '@lingui/core';
import { isLocale, textDirection, type Locale } from '../../shared/locales.js';
import { formatWithValues, type MessageValues } from '../../shared/message-values.js';

/** A message's id: its English text (a number once the build has replaced it). */
export type MessageId = string;
export type { MessageValues };
/** A compiled ICU message: a plain text, or Lingui's tokens. */
type Compiled = string | unknown[];
/** A locale's messages: by index (built) or by English id (unbuilt). */
export type WordTable = Readonly<Record<string | number, Compiled>>;

const lingui = setupI18n({ locale: 'en', messages: { en: {} } });
let table: WordTable = {};
let current: Locale = 'en';

// The message compiler (with its parser) only where messages are not compiled ahead: unit tests
// and the dev server. The build replaces import.meta.env.PROD with true and drops this branch.
const compile: ((message: string) => Compiled) | undefined = (import.meta as { env?: { PROD?: boolean } }).env?.PROD
  ? undefined
  : (await import('@lingui/message-utils/compileMessage')).compileMessage;
const compiledHere = new Map<string, Compiled>();

/** Makes `words` the messages of `locale` (what its catalog module exports). */
export function useLocaleWords(locale: Locale, words: WordTable): void {
  current = locale;
  table = words;
  lingui.loadAndActivate({ locale, messages: words as Record<string, never> });
}

/** The locale whose words are in use. */
export function currentLocale(): Locale {
  return current;
}

export { isLocale, textDirection };

/** Marks a text kept in a table as a message id (translated later with `t`); returns it as it is. */
export function msg<T extends MessageId>(id: T): T {
  return id;
}

function message(id: MessageId | number): Compiled {
  // built, the table is an array indexed by the numbers the build put in; a text that reaches t()
  // at run time (`length`, `constructor`, `1`) is never read as one of its entries
  const found = Array.isArray(table)
    ? typeof id === 'number'
      ? (table[id] as Compiled | undefined)
      : undefined
    : Object.hasOwn(table, id)
      ? table[id]
      : undefined;
  if (found !== undefined) return found;
  // unbuilt, or a locale without this message: the English id, compiled once
  const text = String(id);
  if (!compile || !text.includes('{')) return text;
  let compiled = compiledHere.get(text);
  if (compiled === undefined) compiledHere.set(text, (compiled = compile(text)));
  return compiled;
}

/** The message in the current locale, formatted with its values. */
export function t(id: MessageId, values?: MessageValues): string {
  const compiled = message(id);
  if (typeof compiled === 'string') return compiled;
  const key = String(id);
  // Lingui formats tokens it holds under an id: hand it the ones found here if it lacks them
  if (!(key in lingui.messages)) lingui.load(current, { [key]: compiled as never });
  // a value goes in as it is (Lingui would decode a `\u202e` typed in a name: message-values.ts)
  return values ? formatWithValues(values, (v) => lingui._(key, v)) : lingui._(key);
}
