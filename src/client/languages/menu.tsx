/** The language menu of the public pages: each language named in itself, the one in use chosen. */
import { LOCALE_NAMES, LOCALES } from '../../shared/locales.js';
import { t } from '../i18n/words.js';
import { useApp } from '../ui/app.js';

export function LanguageMenu() {
  const { state, dispatch } = useApp();
  return (
    <label class="flex items-center gap-1 rounded-lg px-2 py-1 text-sm">
      <span class="sr-only">{t('Language')}</span>
      <select
        id="language-menu"
        class="rounded-md border border-line bg-surface px-2 py-1 text-fg"
        value={state.locale}
        onChange={(e) => dispatch(['locale/choose', (e.target as HTMLSelectElement).value])}
      >
        {LOCALES.map((locale) => (
          <option key={locale} value={locale} lang={locale}>
            {LOCALE_NAMES[locale]}
          </option>
        ))}
      </select>
    </label>
  );
}
