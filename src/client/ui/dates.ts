/** Timestamps and numbers as the reader reads them: in their language (the locale in use) and time zone. */
import { currentLocale } from '../i18n/words.js';

/** Date and time; `none` stands in where there is none ('never' for a last use that never came). */
export const dateTime = (iso: string | null | undefined, none = '—'): string => (iso ? new Date(iso).toLocaleString(currentLocale()) : none);

/** The date alone; `timeZone` pins one (a billing period's days are UTC days). */
export const dateOnly = (iso: string | null | undefined, none = '—', timeZone?: string): string =>
  iso ? new Date(iso).toLocaleDateString(currentLocale(), timeZone ? { timeZone } : undefined) : none;

/** Items joined as the reader's language joins a choice ("a or b") or a list ("a and b"). */
export const listText = (items: string[], type: 'disjunction' | 'conjunction'): string => new Intl.ListFormat(currentLocale(), { type }).format(items);

/** A count, grouped as the reader's language groups digits. */
export const numberText = (n: number): string => n.toLocaleString(currentLocale());
