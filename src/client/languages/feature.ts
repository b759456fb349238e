/**
 * The reader's language (docs/i18n.md): the language menu of the public pages, which a visitor
 * uses to pick one (kept in the `locale` cookie, which the server reads too), and the account's
 * own language, put in use when a session starts and kept in the cookie so that the next page
 * load starts in it. The words of a locale are fetched when it is chosen (i18n/load.ts).
 */
import type { EventCore, EventVector } from '../core.js';
import { isLocale, type Locale } from '../../shared/locales.js';
import type { BrowserIo, Feature } from '../shell/features.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';
import { LanguageMenu } from './menu.js';

export function registerLanguages(core: EventCore<AppState>, io: BrowserIo): void {
  // `afterwards`: an event to dispatch once the words are in (a toast said in the new language)
  core.regFx('locale/load', (wanted: Locale | { locale: Locale; afterwards: EventVector }) => {
    const { locale, afterwards } = typeof wanted === 'string' ? { locale: wanted, afterwards: undefined } : wanted;
    void io.loadLocale(locale).then(
      () => {
        core.dispatch(['locale/loaded', locale]);
        if (afterwards) core.dispatch(afterwards);
      },
      () => core.dispatch(['toast/error', { message: t('The words of this language could not be loaded; try again.') }]),
    );
  });
  core.regFx('locale/remember', (locale: Locale | null) => io.rememberLocale(locale));
  core
    // the language menu: the visitor's choice, for this browser
    .regEvent('locale/choose', (_cx, [, locale]) => (isLocale(locale) ? { 'locale/remember': locale, 'locale/load': locale } : {}))
    .regEvent('locale/loaded', ({ state }, [, locale]) => ({ db: { ...state, locale: locale as Locale } }))
    // after each page entry: a session's account with a language of its own speaks it
    // the account's language changed: it, or the browser's when it follows the browser
    .regEvent('locale/account-changed', ({ state }, [, then]) => {
      const wanted = state.account?.locale;
      const load = (locale: Locale) => (then ? { locale, afterwards: then as EventVector } : locale);
      return wanted ? { 'locale/remember': wanted, 'locale/load': load(wanted) } : { 'locale/remember': null, 'locale/load': load(io.browserLocale()) };
    })
    .regEvent('locale/follow-account', ({ state }) => {
      const wanted = state.account?.locale;
      if (!wanted || wanted === state.locale) return {};
      return { 'locale/remember': wanted, 'locale/load': wanted };
    });
}

export const languages: Feature = {
  id: 'languages',
  register: registerLanguages,
  enter: 'locale/follow-account',
  publicTools: LanguageMenu,
};
