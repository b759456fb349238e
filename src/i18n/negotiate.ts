/**
 * A request's locale (docs/i18n.md): the signed-in account's own, else the `locale` cookie the
 * public pages' language menu sets, else the best match of `Accept-Language` (RFC 4647 lookup,
 * the header parsed by `negotiator`; one that matches nothing or is garbage counts as none),
 * else DEFAULT_LOCALE.
 */
import Negotiator from 'negotiator';
import { isLocale, LOCALE_COOKIE, type Locale, lookupLocale } from '../shared/locales.js';

export { LOCALE_COOKIE };

export interface LocaleSources {
  /** the account's setting (a supported locale, or null: it follows the browser) */
  account?: string | null;
  /** the `locale` cookie's value */
  cookie?: string;
  acceptLanguage?: string;
}

// the headers browsers send are few: each one's answer is kept (a bounded map, the oldest out first)
const ACCEPTED = new Map<string, Locale | null>();
const ACCEPTED_MAX = 500;

/** The locale `Accept-Language` names best (q=0 ones left out); undefined for none. */
export function acceptedLocale(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  // a header far longer than any browser's is not read (the parser's work grows with it)
  if (header.length > 1024) return undefined;
  const known = ACCEPTED.get(header);
  if (known !== undefined) return known ?? undefined;
  const locale = lookupLocale(new Negotiator({ headers: { 'accept-language': header } }).languages());
  if (ACCEPTED.size >= ACCEPTED_MAX) ACCEPTED.delete(ACCEPTED.keys().next().value!);
  ACCEPTED.set(header, locale ?? null);
  return locale;
}

/** The locale the sources name, if any names a supported one. */
export function namedLocale(sources: LocaleSources): Locale | undefined {
  if (isLocale(sources.account)) return sources.account;
  if (isLocale(sources.cookie)) return sources.cookie;
  return acceptedLocale(sources.acceptLanguage);
}

export function requestLocale(sources: LocaleSources, fallback: Locale): Locale {
  return namedLocale(sources) ?? fallback;
}
