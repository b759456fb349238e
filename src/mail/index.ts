/**
 * The mail component: the outbox, the delivery worker and the transport, built from the
 * configuration. Services queue messages with {@link Mail.enqueue} inside their own
 * transaction; the worker delivers them. See docs/email.md.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { LogBackend } from '../logging/logger.js';
import type { Locale } from '../shared/locales.js';
import type { MailDeliveryOutcome } from '../observability/events.js';
import { Outbox, type MailboxMessage, type MailExecutor, type MailMessage } from './outbox.js';
import type { MailKind } from './kinds.js';
import { displayNameOf, mailboxTransport } from './transport.js';
import type { MailSettings } from './settings.js';
import { MailWorker } from './worker.js';

export type { MailboxMessage, MailExecutor, MailMessage } from './outbox.js';
export { LINK_LIFETIME_SECONDS, MAIL_KINDS, type MailKind, type MailTemplates } from './kinds.js';

/** Reading the messages the system wrote: the dev mailbox page, and tests. */
export interface Mailbox {
  /** newest first; filter by recipient (case-insensitive) or kind; `limit` 50 by default, 500 at most */
  list(options?: { to?: string; kind?: MailKind; limit?: number }): Promise<MailboxMessage[]>;
  /** one message, or undefined (also for an id that is not a UUID) */
  get(id: string): Promise<MailboxMessage | undefined>;
}

export interface Mail {
  /**
   * Renders `message` from its template, in its recipient's language (the account's locale,
   * else `message.locale`, else DEFAULT_LOCALE), and writes it to the outbox through `executor`, the
   * transaction of the change that causes it (or the database, for a message on its own). It
   * is delivered if and only if that transaction commits. Resolves to the message id.
   *
   * @example
   * await db.transaction().execute(async (trx) => {
   *   await trx.insertInto('email_token').values(...).execute();
   *   await mail.enqueue(trx, { kind: 'verify-email', to: account.email, data: { name: account.name, token } });
   * });
   */
  enqueue(executor: MailExecutor, message: MailMessage): Promise<string>;
  mailbox: Mailbox;
  worker: MailWorker;
  /** `smtp` when MAIL_URL is set, `mailbox` otherwise */
  transport: 'smtp' | 'mailbox';
}

export interface MailOptions {
  /** told how each delivery attempt ended (metrics) */
  onDelivery?: (outcome: MailDeliveryOutcome) => void;
  /** DEFAULT_LOCALE: the language of a recipient with none of their own (`en` when not given) */
  defaultLocale?: Locale;
}

export async function createMail(
  settings: MailSettings,
  appUrl: string,
  db: Kysely<DatabaseSchema>,
  logs: LogBackend,
  options: MailOptions = {},
): Promise<Mail> {
  // nodemailer is loaded only when there is an SMTP server to send to
  const transport = settings.url ? (await import('./smtp-transport.js')).smtpTransport({ url: settings.url }) : mailboxTransport();
  const outbox = new Outbox(db, settings.from, { appUrl, product: displayNameOf(settings.from) ?? 'SaaS' }, options.defaultLocale);
  const worker = new MailWorker({
    outbox,
    transport,
    log: logs.logger('saas.mail'),
    pollMs: settings.pollMs,
    leaseMs: settings.leaseMs,
    retry: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, giveUpMs: settings.giveUpMs },
    onDelivery: options.onDelivery,
  });
  return {
    async enqueue(executor, message) {
      const id = await outbox.insert(executor, message);
      worker.nudge();
      return id;
    },
    mailbox: { list: (options) => outbox.list(options), get: (id) => outbox.get(id) },
    worker,
    transport: transport.name,
  };
}
