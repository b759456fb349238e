/**
 * Security notices (the table in docs/sign-in.md, "Security notices"), notifications of the
 * critical `security` category: always shown in the app and emailed at once (docs/notifications.md).
 * a change to how the account signs in, or a sign-in from a browser the account has not used
 * before, is told to its address. Each notice is queued in the transaction of the change it
 * tells of, so it goes out exactly when the change committed. It says what happened, when,
 * from which browser and address, and where to look if it was not the owner.
 */
import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/log.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { SecurityEvent } from '../mail/kinds.js';
import type { Phrase } from '../i18n/messages.js';
import { browserOnSystem, browserWords, SECURITY_EVENT_WORDS } from '../mail/security-words.js';
import type { NotificationKind } from '../notifications/kinds.js';
import type { NotificationService } from '../notifications/service.js';
import type { Locale } from '../shared/locales.js';

export type { SecurityEvent };

/** Queues the notice of `event` to the account's address in `trx`; `detail`: e.g. the passkey's or the provider's name. */
export type SecurityNotices = (trx: Kysely<DatabaseSchema>, accountId: string, event: SecurityEvent, origin: RequestOrigin, detail?: string) => Promise<void>;

/**
 * A short, readable name of a browser from its User-Agent ("Firefox on Linux": a phrase, worded in
 * each recipient's language; a browser or a system alone, or the agent itself, as it is); null when there is none.
 */
export function describeBrowser(userAgent: string | null | undefined): string | Phrase | null {
  if (!userAgent) return null;
  const browsers: Array<[RegExp, string]> = [
    [/Edg(e|A|iOS)?\//, 'Edge'],
    [/OPR\/|Opera/, 'Opera'],
    [/Firefox\/|FxiOS\//, 'Firefox'],
    [/Chrome\/|CriOS\//, 'Chrome'],
    [/Safari\//, 'Safari'],
  ];
  const systems: Array<[RegExp, string]> = [
    [/Android/, 'Android'],
    [/iPhone|iPad|iPod/, 'iOS'],
    [/Windows/, 'Windows'],
    [/Mac OS X|Macintosh/, 'macOS'],
    [/CrOS/, 'ChromeOS'],
    [/Linux/, 'Linux'],
  ];
  const browser = browsers.find(([re]) => re.test(userAgent))?.[1];
  const system = systems.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return browserOnSystem(browser, system);
  return browser ?? system ?? userAgent.slice(0, 80);
}

/** The account module's notification kinds: the security notices (critical). */
export const ACCOUNT_NOTIFICATION_KINDS: NotificationKind[] = [
  { kind: 'security-notice', category: 'security', description: 'a change to how the account signs in, or a sign-in from a new browser' },
  { kind: 'password-changed', category: 'security', description: "the account's password was changed" },
  { kind: 'email-change-requested', category: 'security', description: "a change of the account's address was asked for (told to the old address)" },
  { kind: 'credentials-removed', category: 'security', description: 'what was added before the address was proven was removed' },
];

const sentence = (text: string, locale: Locale) => text.charAt(0).toLocaleUpperCase(locale) + text.slice(1);

export function securityNotices(notifications: Pick<NotificationService, 'notify'>, product: string): SecurityNotices {
  const ownAccount = new RegExp(` (for|to|from) your ${product.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} account$`);
  return async (trx, accountId, event, origin, detail) => {
    // the in-app words in the recipient's language, as the email's (rendered by the outbox)
    const words = (locale: Locale) => SECURITY_EVENT_WORDS[event](detail, product, locale);
    const browser = describeBrowser(origin.userAgent);
    const from = (locale: Locale) => (browser || origin.ip ? ` (${[browser && browserWords(browser, locale), origin.ip].filter(Boolean).join(', ')})` : '');
    await notifications.notify(trx, {
      kind: 'security-notice',
      to: { accounts: [accountId] },
      // English titles drop the subject's "… your Acme account": the app is that account
      title: (locale) => (locale === 'en' ? words(locale).subject.replace(ownAccount, '') : words(locale).subject),
      body: (locale) => `${sentence(words(locale).text, locale)}${from(locale)}`,
      url: '/settings/security',
      email: (account) => ({
        kind: 'security-notice',
        to: account.email,
        data: { name: account.name, event, at: new Date(), browser, ip: origin.ip, ...(detail ? { detail } : {}) },
      }),
    });
  };
}
