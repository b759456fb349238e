/**
 * Loading a locale's words: each locale's catalog is its own chunk, fetched when the locale is
 * chosen (main.ts imports this; unit tests use the English ids and never load one).
 */
import type { Locale } from '../../shared/locales.js';
import { useLocaleWords, type WordTable } from './words.js';

const CATALOGS: Record<Locale, () => Promise<{ default: WordTable }>> = {
  en: () => import('virtual:client-words/en'),
  de: () => import('virtual:client-words/de'),
  es: () => import('virtual:client-words/es'),
  ar: () => import('virtual:client-words/ar'),
};

/** Fetches the locale's words and puts them in use; the document's `lang` and `dir` follow. */
export async function loadLocale(locale: Locale, dir: 'ltr' | 'rtl'): Promise<void> {
  const words = (await CATALOGS[locale]()).default;
  useLocaleWords(locale, words);
  document.documentElement.lang = locale;
  document.documentElement.dir = dir;
}
