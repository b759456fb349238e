/**
 * The words of security events, shared by the emails and the in-app notifications: what proving
 * an address removed (account/address-proof.ts) and what a security notice says of its event
 * (account/notices.ts), as phrases formatted in the recipient's language.
 */
import { type Phrase, phrase } from '../i18n/messages.js';
import type { Locale } from '../shared/locales.js';
import type { SecurityEvent } from './kinds.js';
import { mailWords } from './words.js';

/**
 * What proving an address removed (account/address-proof.ts), one phrase each: the notice email
 * and the in-app notification word them in the recipient's language, the API answers in English.
 */
export const REMOVED_WORDS = {
  password: (): Phrase => phrase('the password'),
  passkeys: (count: number): Phrase => phrase('{count, plural, one {# passkey} other {# passkeys}}', { count }),
  identities: (providers: string): Phrase => phrase('sign-in through {providers}', { providers }),
  twoFactor: (): Phrase => phrase('two-factor authentication (its authenticator app and backup codes)'),
  unfinishedTwoFactor: (): Phrase => phrase('a two-factor set-up that was not finished'),
  apiKeys: (count: number): Phrase => phrase('{count, plural, one {# API key} other {# API keys}}', { count }),
  emailChange: (email: string): Phrase => phrase("a pending change of the account's address to {email}", { email }),
  sessions: (count: number, others: boolean): Phrase =>
    others
      ? phrase('{count, plural, one {# other signed-in session} other {# other signed-in sessions}}', { count })
      : phrase('{count, plural, one {# signed-in session} other {# signed-in sessions}}', { count }),
};

/** A browser on a system ("Chrome on Linux"): the names stay as they are, the words around them are the recipient's. */
export const browserOnSystem = (browser: string, system: string): Phrase => phrase('{browser} on {system}', { browser, system });

/** Which browser, in `locale`: a name alone as it is, a browser on a system ({@link browserOnSystem}) in the locale's words. */
export const browserWords = (browser: string | Phrase, locale: Locale): string => (typeof browser === 'string' ? browser : mailWords(locale).t(browser));

type EventWords = (detail: string | undefined, product: string, locale?: Locale) => { subject: string; text: string };

/** One event's words: its subject and sentence as phrases, formatted in `locale` (English by default). */
const eventWords =
  (words: (detail: string | undefined, product: string) => { subject: Phrase; text: Phrase }): EventWords =>
  (detail, product, locale = 'en') => {
    const { subject, text } = words(detail, product);
    const w = mailWords(locale);
    return { subject: w.t(subject), text: w.t(text) };
  };

/**
 * What a security notice says of its event, in `locale` (English when none is given): its subject
 * and its sentence (also the notification's words: src/account/notices.ts).
 */
export const SECURITY_EVENT_WORDS: Record<SecurityEvent, EventWords> = {
  'two-factor-enabled': eventWords((_d, product) => ({
    subject: phrase('Two-factor authentication was turned on for your {product} account', { product }),
    text: phrase('two-factor authentication was turned on: signing in now also asks for a code from an authenticator app.'),
  })),
  'two-factor-disabled': eventWords((_d, product) => ({
    subject: phrase('Two-factor authentication was turned off for your {product} account', { product }),
    text: phrase('two-factor authentication was turned off: signing in no longer asks for a code.'),
  })),
  'backup-codes-regenerated': eventWords((_d, product) => ({
    subject: phrase('New backup codes were made for your {product} account', { product }),
    text: phrase('new two-factor backup codes were made; the earlier ones no longer work.'),
  })),
  'passkey-added': eventWords((detail, product) => ({
    subject: phrase('A passkey was added to your {product} account', { product }),
    text: detail
      ? phrase('a passkey ({detail}) was added: it can sign in to the account from now on.', { detail })
      : phrase('a passkey was added: it can sign in to the account from now on.'),
  })),
  'passkey-removed': eventWords((detail, product) => ({
    subject: phrase('A passkey was removed from your {product} account', { product }),
    text: detail ? phrase('a passkey ({detail}) was removed: it no longer signs in.', { detail }) : phrase('a passkey was removed: it no longer signs in.'),
  })),
  'identity-unlinked': eventWords((detail, product) => ({
    subject: detail
      ? phrase('{provider} was unlinked from your {product} account', { provider: detail, product })
      : phrase('A provider was unlinked from your {product} account', { product }),
    text: detail
      ? phrase('the sign-in with {provider} was unlinked: it no longer signs in.', { provider: detail })
      : phrase('the sign-in with a provider was unlinked: it no longer signs in.'),
  })),
  'new-browser-sign-in': eventWords((detail, product) => ({
    subject: phrase('New sign-in to your {product} account', { product }),
    text: detail
      ? phrase('your account was signed in to ({detail}) from a browser it had not used before.', { detail })
      : phrase('your account was signed in to from a browser it had not used before.'),
  })),
};
