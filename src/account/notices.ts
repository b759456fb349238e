/**
 * Security notices by email (the table in docs/sign-in.md, "Security notices"):
 * a change to how the account signs in, or a sign-in from a browser the account has not used
 * before, is told to its address. Each notice is queued in the transaction of the change it
 * tells of, so it goes out exactly when the change committed. It says what happened, when,
 * from which browser and address, and where to look if it was not the owner.
 */
import type { Kysely } from 'kysely';
import type { RequestOrigin } from '../audit/log.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { Mail } from '../mail/index.js';
import type { SecurityEvent } from '../mail/kinds.js';

export type { SecurityEvent };

/** Queues the notice of `event` to the account's address in `trx`; `detail`: e.g. the passkey's or the provider's name. */
export type SecurityNotices = (trx: Kysely<DatabaseSchema>, accountId: string, event: SecurityEvent, origin: RequestOrigin, detail?: string) => Promise<void>;

/** A short, readable name of a browser from its User-Agent ("Firefox on Linux"); null when there is none. */
export function describeBrowser(userAgent: string | null | undefined): string | null {
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
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 80);
}

export function securityNotices(mail: Pick<Mail, 'enqueue'>): SecurityNotices {
  return async (trx, accountId, event, origin, detail) => {
    const account = await trx.selectFrom('account').select(['email', 'name']).where('id', '=', accountId).executeTakeFirst();
    if (!account) return;
    await mail.enqueue(trx, {
      kind: 'security-notice',
      to: account.email,
      data: { name: account.name, event, at: new Date(), browser: describeBrowser(origin.userAgent), ip: origin.ip, ...(detail ? { detail } : {}) },
    });
  };
}
