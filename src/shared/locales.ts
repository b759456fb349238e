/**
 * The product's languages (docs/i18n.md), shared by the server and the browser: which locales
 * exist, which read right to left, and RFC 4647 "lookup" of a reader's preferences among them.
 */

export const LOCALES = ['en', 'de', 'es', 'ar'] as const;
export type Locale = (typeof LOCALES)[number];

/** Each locale's name in itself, for a language menu (a reader looks for their own language). */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch', es: 'Español', ar: 'العربية' };

/** The hidden field of the served page naming its locale (negotiated by the server), whose words the client loads before its first render. */
export const PAGE_LOCALE_FIELD = '__locale';

/** The cookie the language menu sets (a visitor's choice; the server reads it too). */
export const LOCALE_COOKIE = 'locale';

const RIGHT_TO_LEFT: ReadonlySet<Locale> = new Set(['ar']);

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

export function textDirection(locale: Locale): 'ltr' | 'rtl' {
  return RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr';
}

/** A BCP 47 language tag's shape (letters and digits in subtags of 1 to 8), nothing more. */
const TAG = /^[a-z]{1,8}(-[a-z0-9]{1,8})*$/i;

/**
 * The supported locale a tag names, by RFC 4647 lookup: the tag, then the tag with its last
 * subtag dropped, and so on (`de-AT` → `de`). Undefined for a malformed or unsupported tag.
 */
export function supportedLocale(tag: string): Locale | undefined {
  if (!TAG.test(tag)) return undefined;
  let range = tag.toLowerCase();
  for (;;) {
    if (isLocale(range)) return range;
    const cut = range.lastIndexOf('-');
    if (cut < 0) return undefined;
    // a single-letter subtag (`x-…`, an extension) goes with the one after it
    range = range.slice(0, cut).replace(/-[a-z0-9]$/, '');
  }
}

/** The first of the reader's languages, most preferred first, that a supported locale matches. */
export function lookupLocale(preferred: readonly string[]): Locale | undefined {
  for (const tag of preferred) {
    const locale = supportedLocale(tag);
    if (locale) return locale;
  }
  return undefined;
}
