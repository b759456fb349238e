/**
 * The outbox table and every query on it. A message is rendered and written in the caller's
 * transaction, so it exists exactly when the change that caused it was committed. The worker
 * claims due messages with `FOR UPDATE SKIP LOCKED` and a lease (`locked_until`), so several
 * instances never claim the same message, and one that dies mid-send gives its messages back
 * when the lease runs out. Times are the database's (`now()`), the one clock all instances share.
 */
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema, MailStatus } from '../db/schema.js';
import { exponentialDelayMs } from '../runtime/jobs.js';
import type { MailKind, MailTemplates } from './kinds.js';
import { isLocale, type Locale } from '../shared/locales.js';
import { renderMail, type TemplateContext } from './templates.js';

/** A Kysely transaction (the usual case) or the database itself, for a message on its own. */
export type MailExecutor = Kysely<DatabaseSchema>;

/** What a caller queues: the kind, one recipient and the kind's template data. */
export type MailMessage = {
  [K in MailKind]: {
    kind: K;
    to: string;
    data: MailTemplates[K];
    /** headers of the message beyond the transport's own (List-Unsubscribe: src/notifications/) */
    headers?: Record<string, string>;
    /**
     * the language for a recipient without an account of their own (an invitation: the
     * inviter's); an account's own locale comes first, DEFAULT_LOCALE when neither is set
     */
    locale?: Locale | null;
  };
}[MailKind];

/** header names a message may set: none that would change where or from whom it goes */
const SETTABLE_HEADER = /^(List-Unsubscribe|List-Unsubscribe-Post|List-Id)$/;

/** A message as the mailbox shows it. */
export interface MailboxMessage {
  id: string;
  kind: string;
  to: string;
  from: string;
  subject: string;
  /** headers the message set (List-Unsubscribe) */
  headers: Record<string, string>;
  /** null once delivered over SMTP (bodies carry live tokens and are dropped after delivery) */
  html: string | null;
  text: string | null;
  status: MailStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

/** A claimed message, ready to send. */
export interface ClaimedMail {
  id: string;
  kind: string;
  to: string;
  from: string;
  subject: string;
  html: string;
  text: string;
  attempts: number;
  headers: Record<string, string>;
}

export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  /** a message not delivered this long after it was queued fails */
  giveUpMs: number;
}

/** Sent and failed messages older than this are deleted by the worker. */
export const OUTBOX_RETENTION_DAYS = 30;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// one address, no display name, nothing that could start another header or recipient
const ADDRESS = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;

const ms = (n: number) => sql<Date>`now() + (${Math.round(n)}::bigint * interval '1 millisecond')`;

/** The next attempt's delay after `attempts` failed ones: doubling from `baseMs`, capped, with up to 10% jitter. */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random = Math.random): number {
  return exponentialDelayMs(policy, attempts, random);
}

export class Outbox {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly from: string,
    private readonly templates: TemplateContext,
    /** DEFAULT_LOCALE: the language of a recipient with none of their own */
    private readonly defaultLocale: Locale = 'en',
  ) {}

  /**
   * The recipient's language (docs/email.md, "Languages"), read through `executor`: the locale of
   * the account with the address `to`, else the message's `locale`, else DEFAULT_LOCALE. Never
   * the language of the request that caused the message: its sender may be someone else.
   */
  async recipientLocale(executor: MailExecutor, to: string, fallback?: Locale | null): Promise<Locale> {
    // addresses are stored lower-cased (normalizeEmail), so the unique index answers
    const account = await executor.selectFrom('account').select('locale').where('email', '=', to.toLowerCase()).executeTakeFirst();
    if (isLocale(account?.locale)) return account.locale;
    return isLocale(fallback) ? fallback : this.defaultLocale;
  }

  /**
   * Renders `message` in its recipient's language and inserts it through `executor`: pass the transaction of the change
   * that causes the message, and it is sent if and only if that transaction commits.
   * Returns the message id. Throws a TypeError for a `to` that is not one plain address.
   */
  async insert(executor: MailExecutor, message: MailMessage): Promise<string> {
    if (typeof message.to !== 'string' || message.to.length > 254 || !ADDRESS.test(message.to)) {
      throw new TypeError(`mail ${message.kind}: "to" must be one plain email address`);
    }
    const locale = await this.recipientLocale(executor, message.to, message.locale);
    const rendered = renderMail(message.kind, message.data as never, this.templates, locale);
    for (const [name, value] of Object.entries(message.headers ?? {}))
      if (!SETTABLE_HEADER.test(name) || /[\r\n]/.test(value)) throw new TypeError(`mail ${message.kind}: the header ${name} may not be set so`);
    const row = await executor
      .insertInto('mail_outbox')
      .values({
        kind: message.kind,
        to_address: message.to.toLowerCase(),
        from_address: this.from,
        subject: rendered.subject,
        html_body: rendered.html,
        text_body: rendered.text,
        headers: message.headers && Object.keys(message.headers).length > 0 ? JSON.stringify(message.headers) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Newest first; `to` and `kind` filter, `limit` defaults to 50 (at most 500). */
  async list(options: { to?: string; kind?: MailKind; limit?: number } = {}): Promise<MailboxMessage[]> {
    let query = this.db
      .selectFrom('mail_outbox')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(options.limit ?? 50, 1), 500));
    if (options.to) query = query.where('to_address', '=', options.to.toLowerCase());
    if (options.kind) query = query.where('kind', '=', options.kind);
    return (await query.execute()).map(toMailboxMessage);
  }

  async get(id: string): Promise<MailboxMessage | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toMailboxMessage(row);
  }

  /** Claims up to `limit` due messages for `claimId` until the lease ends; attempts counts this one. */
  async claim(claimId: string, limit: number, leaseMs: number): Promise<ClaimedMail[]> {
    const rows = await this.db
      .updateTable('mail_outbox')
      .set({ status: 'sending', attempts: sql<number>`attempts + 1`, locked_until: ms(leaseMs), locked_by: claimId })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('mail_outbox')
          .select('id')
          .where((w) =>
            w.or([
              w.and([w('status', '=', 'pending'), w('next_attempt_at', '<=', sql<Date>`now()`)]),
              w.and([w('status', '=', 'sending'), w('locked_until', '<=', sql<Date>`now()`)]),
            ]),
          )
          .orderBy('next_attempt_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['id', 'kind', 'to_address', 'from_address', 'subject', 'html_body', 'text_body', 'attempts', 'headers'])
      .execute();
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      to: r.to_address,
      from: r.from_address,
      subject: r.subject,
      html: r.html_body ?? '',
      text: r.text_body ?? '',
      attempts: r.attempts,
      headers: r.headers ?? {},
    }));
  }

  /**
   * Marks a claimed message sent; `dropBodies` clears its parts (after an SMTP delivery).
   * False when the claim was lost (the lease ran out and another instance took the message).
   */
  async markSent(id: string, claimId: string, dropBodies: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('mail_outbox')
      .set({
        status: 'sent',
        sent_at: sql<Date>`now()`,
        locked_until: null,
        locked_by: null,
        last_error: null,
        ...(dropBodies ? { html_body: null, text_body: null } : {}),
      })
      .where('id', '=', id)
      .where('locked_by', '=', claimId)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Records a failed attempt: the message is due again after the backoff, or `failed` when
   * that would pass the give-up time. Returns the new status, or undefined when the claim was lost.
   */
  async markAttemptFailed(
    id: string,
    claimId: string,
    attempts: number,
    error: string,
    policy: RetryPolicy,
  ): Promise<{ status: MailStatus; nextAttemptAt: Date } | undefined> {
    const delay = retryDelayMs(policy, attempts);
    const row = await this.db
      .updateTable('mail_outbox')
      .set({
        status: sql<MailStatus>`case when ${ms(delay)} > created_at + (${policy.giveUpMs}::bigint * interval '1 millisecond') then 'failed' else 'pending' end`,
        next_attempt_at: ms(delay),
        last_error: error,
        locked_until: null,
        locked_by: null,
      })
      .where('id', '=', id)
      .where('locked_by', '=', claimId)
      .where('status', '=', 'sending')
      .returning(['status', 'next_attempt_at'])
      .executeTakeFirst();
    return row && { status: row.status, nextAttemptAt: row.next_attempt_at };
  }

  /** Deletes sent and failed messages older than the retention; returns how many. */
  async purge(olderThanDays = OUTBOX_RETENTION_DAYS): Promise<number> {
    const result = await this.db
      .deleteFrom('mail_outbox')
      .where('status', 'in', ['sent', 'failed'])
      .where('created_at', '<', sql<Date>`now() - (${olderThanDays}::integer * interval '1 day')`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toMailboxMessage(r: {
  id: string;
  kind: string;
  to_address: string;
  from_address: string;
  subject: string;
  html_body: string | null;
  text_body: string | null;
  status: MailStatus;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
  headers: Record<string, string> | null;
}): MailboxMessage {
  return {
    headers: r.headers ?? {},
    id: r.id,
    kind: r.kind,
    to: r.to_address,
    from: r.from_address,
    subject: r.subject,
    html: r.html_body,
    text: r.text_body,
    status: r.status,
    attempts: r.attempts,
    lastError: r.last_error,
    createdAt: new Date(r.created_at),
    sentAt: r.sent_at && new Date(r.sent_at),
  };
}
