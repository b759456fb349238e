/**
 * The words of an email in its recipient's language (docs/email.md, "Languages"): the mail
 * feature's catalogs (messages/) through its own {@link Translator}, and dates formatted for the
 * locale. English is the ids themselves, so an English message is exactly what the code writes.
 */
import { type Phrase, Translator } from '../i18n/messages.js';
import type { Locale } from '../shared/locales.js';
import { MAIL_MESSAGES } from './messages/index.js';

const translator = new Translator([MAIL_MESSAGES]);

export interface MailWords {
  locale: Locale;
  /** the message in the recipient's locale */
  t(message: string | Phrase): string;
  /** `November 22, 2026` in the locale (UTC) */
  date(at: Date): string;
  /** `November 22, 2026 at 10:05 AM` in the locale (UTC) */
  dateTime(at: Date): string;
}

const cache = new Map<Locale, MailWords>();

export function mailWords(locale: Locale): MailWords {
  let words = cache.get(locale);
  if (!words) {
    const longDate = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
    const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
    words = { locale, t: (message) => translator.text(locale, message), date: (at) => longDate.format(at), dateTime: (at) => dateTime.format(at) };
    cache.set(locale, words);
  }
  return words;
}
