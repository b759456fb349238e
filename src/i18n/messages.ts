/**
 * The server's words in the reader's language (docs/i18n.md): ICU MessageFormat through
 * Lingui's runtime (`@lingui/core`), the messages compiled once when the catalogs load.
 *
 * The server's messages are keyed by their English text, as the code writes it (gettext's way):
 * `forbidden('Only admins can do this')` stays readable, and English needs no catalog. A
 * message with values is a {@link Phrase}: `phrase('{field} is taken', {field})`, its id the
 * ICU template. Each feature has one catalog per other locale (`<feature>/messages/<locale>.json`,
 * English id → translation), declared by its module under {@link MESSAGES_KEY};
 * `test/i18n/catalogs.test.ts` checks that every id the code uses is in every catalog, that
 * every id in a catalog is used, and that every message parses.
 */
import { type I18n, setupI18n } from '@lingui/core';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { LOCALES, type Locale } from '../shared/locales.js';
import { formatWithValues, type MessageValues } from '../shared/message-values.js';

export type { MessageValues };

/** What a module declares its catalogs under (`declares: { [MESSAGES_KEY]: [catalogs] }`). */
export const MESSAGES_KEY = 'i18n/messages';

/** A message with values: its id is the English ICU template. */
export interface Phrase {
  readonly id: string;
  readonly values?: PhraseValues;
}

/** Names joined in the reader's words (`a, b or c`, `a, b oder c`): see {@link list}. */
export interface ListValue {
  readonly list: readonly string[];
  readonly type: 'conjunction' | 'disjunction';
}

/**
 * A phrase's values: texts and numbers go in as they are; a value that is itself a
 * {@link Phrase} (a parser's reason, "{browser} on {system}") is said in the same locale first,
 * a {@link ListValue} joined by `Intl.ListFormat` in it.
 */
export type PhraseValues = Readonly<Record<string, string | number | Phrase | ListValue>>;

/** Names as one value, joined with "and" (`conjunction`) or "or" (`disjunction`) in the reader's language. */
export function list(items: readonly string[], type: ListValue['type'] = 'conjunction'): ListValue {
  return { list: items, type };
}

const listFormats = new Map<string, Intl.ListFormat>();
function joined(value: ListValue, locale: Locale): string {
  const key = `${locale} ${value.type}`;
  let format = listFormats.get(key);
  if (!format) listFormats.set(key, (format = new Intl.ListFormat(locale, { type: value.type })));
  return format.format(value.list);
}

/** Marks a message with values for translation; `english(p)` is its English text. */
export function phrase(id: string, values?: PhraseValues): Phrase {
  return values ? { id, values } : { id };
}

/** Marks a text kept in a table as a message id, for the catalogs' check; returns it as it is. */
export function msg<T extends string>(id: T): T {
  return id;
}

/** The locales other than English, each a catalog: English id → ICU message. */
export type Catalog = Readonly<Record<string, string>>;
export type Catalogs = Readonly<Partial<Record<Exclude<Locale, 'en'>, Catalog>>>;

const englishI18n = setupI18n({ locale: 'en', messages: { en: {} } });
const englishCompiled = new Set<string>();

/** `values` with each phrase among them said by `say`, each list joined in `locale` (most have neither: then `values` itself). */
function saidValues(values: PhraseValues, locale: Locale, say: (message: Phrase) => string): MessageValues {
  let said: Record<string, string | number> | undefined;
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'object') continue;
    said ??= { ...(values as Record<string, string | number>) };
    said[name] = 'list' in value ? joined(value, locale) : say(value);
  }
  return said ?? (values as MessageValues);
}

function formatWith(i18n: I18n, id: string, values: MessageValues | undefined): string {
  // a value goes in as it is (Lingui would decode a `\u0000` typed in a name: message-values.ts)
  return values ? formatWithValues(values, (v) => i18n._(id, v)) : i18n._(id);
}

/** A message in English: its id formatted with its values (compiled the first time it is used). */
export function english(message: string | Phrase): string {
  if (typeof message === 'string') return message;
  if (!message.values) return message.id;
  if (!englishCompiled.has(message.id)) {
    englishI18n.load('en', { [message.id]: compileMessage(message.id) });
    englishCompiled.add(message.id);
  }
  return formatWith(englishI18n, message.id, saidValues(message.values, 'en', english));
}

/** Every locale's messages, from the catalogs of the features; English is the ids themselves. */
export class Translator {
  private readonly instances = new Map<Locale, { i18n: I18n; ids: ReadonlySet<string>; plain: ReadonlyMap<string, string> }>();

  constructor(catalogs: readonly Catalogs[]) {
    for (const locale of LOCALES) {
      if (locale === 'en') continue;
      const merged: Record<string, string> = {};
      for (const c of catalogs) Object.assign(merged, c[locale]);
      const compiled = Object.fromEntries(Object.entries(merged).map(([id, message]) => [id, compileMessage(message)]));
      // a message with nothing to format (most field reasons) is its text: no runtime call for it
      const plain = new Map(Object.entries(compiled).flatMap(([id, c]) => (typeof c === 'string' ? [[id, c] as const] : [])));
      this.instances.set(locale, { i18n: setupI18n({ locale, messages: { [locale]: compiled } }), ids: new Set(Object.keys(merged)), plain });
    }
  }

  /** The message in `locale`; its English text when the locale has no translation of it. */
  text(locale: Locale, message: string | Phrase): string {
    const id = typeof message === 'string' ? message : message.id;
    const values = typeof message === 'string' ? undefined : message.values;
    const target = this.instances.get(locale);
    if (!target?.ids.has(id)) return english(message);
    if (!values) {
      const text = target.plain.get(id);
      if (text !== undefined) return text;
    }
    return formatWith(target.i18n, id, values && saidValues(values, locale, (p) => this.text(locale, p)));
  }
}
