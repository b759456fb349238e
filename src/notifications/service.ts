/**
 * Notifications (docs/notifications.md): `notify` in the transaction of the cause writes one row
 * per account it reaches and queues the email its channels ask for (the kind's own message, or the
 * generic one), with RFC 8058's List-Unsubscribe headers unless the category is critical. A row's
 * insert wakes every instance's streams (the trigger of migration 0027). Reading is the account's
 * own: a keyset page, read marks, deletion.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import { notFound } from '../http/errors.js';
import type { OrgRole } from '../http/routes.js';
import type { Phrase, Translator } from '../i18n/messages.js';
import type { Mail, MailMessage } from '../mail/index.js';
import { isLocale, type Locale } from '../shared/locales.js';
import type { NotificationCategory, NotificationKind } from './kinds.js';
import type { Preferences } from './preferences.js';
import type { MarkRead, Notification, NotificationList } from './schemas.js';
import type { UnsubscribeTokens } from './unsubscribe.js';

/** Who a notification reaches: accounts by id, or an organization's members of some roles (`except` the one who caused it). */
export type Audience = { accounts: readonly string[] } | { organization: string; roles: readonly OrgRole[]; except?: string };

/**
 * A notification's title or body, written in each recipient's language (the account's locale,
 * else the default): an English message id (`'Your password was changed'`), a phrase with values,
 * or a function of the locale for words another module renders (a security notice's).
 */
export type NotificationText = string | Phrase | ((locale: Locale) => string);

export interface NotifyInput {
  kind: string;
  to: Audience;
  /** the organization it is about (its default preferences apply), or none */
  organizationId?: string | null;
  title: NotificationText;
  body: NotificationText;
  /** a path in the app */
  url?: string | null;
  /** the kind's own email for one account; without, the generic `notification` message */
  email?(account: { id: string; email: string; name: string | null }, unsubscribeUrl: string | null): MailMessage | undefined;
}

export interface NotificationServiceDeps {
  db: DB;
  mail: Pick<Mail, 'enqueue'>;
  preferences: Preferences;
  categories: ReadonlyMap<string, NotificationCategory>;
  kinds: ReadonlyMap<string, NotificationKind>;
  unsubscribe: UnsubscribeTokens;
  appUrl: string;
  /** every module's catalogs: a notification is stored in its recipient's words */
  translator: Pick<Translator, 'text'>;
  defaultLocale: Locale;
}

type Row = {
  id: string;
  seq: string;
  kind: string;
  category: string;
  title: string;
  body: string;
  url: string | null;
  organization_id: string | null;
  created_at: Date;
  read_at: Date | null;
};

export const toNotification = (row: Row): Notification => ({
  id: row.id,
  kind: row.kind,
  category: row.category,
  title: row.title,
  body: row.body,
  url: row.url,
  'organization-id': row.organization_id,
  'created-at': row.created_at.toISOString(),
  'read-at': row.read_at ? row.read_at.toISOString() : null,
  cursor: String(row.seq),
});

export const NOTIFICATION_COLUMNS = ['id', 'seq', 'kind', 'category', 'title', 'body', 'url', 'organization_id', 'created_at', 'read_at'] as const;

export class NotificationService {
  constructor(private readonly deps: NotificationServiceDeps) {}

  /** `APP_URL/api/notifications/unsubscribe?token=…` for the account and category. */
  unsubscribeUrl(accountId: string, category: string): string {
    return `${this.deps.appUrl}/api/notifications/unsubscribe?token=${this.deps.unsubscribe.sign({ accountId, category })}`;
  }

  /** RFC 8058's headers of an email of `category` to the account. */
  unsubscribeHeaders(accountId: string, category: string): Record<string, string> {
    return { 'List-Unsubscribe': `<${this.unsubscribeUrl(accountId, category)}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
  }

  private async accountsOf(trx: DB, to: Audience) {
    const query = trx.selectFrom('account').select(['account.id', 'account.email', 'account.name', 'account.locale']);
    if ('accounts' in to) return to.accounts.length === 0 ? [] : query.where('account.id', 'in', [...to.accounts]).execute();
    let members = query
      .innerJoin('membership as m', 'm.account_id', 'account.id')
      .where('m.organization_id', '=', to.organization)
      .where('m.role', 'in', [...to.roles])
      .where('m.suspended_at', 'is', null);
    if (to.except) members = members.where('account.id', '<>', to.except);
    return members.execute();
  }

  /** Writes the notification for its audience in `trx`, the transaction of its cause, and queues its emails. */
  async notify(trx: DB, input: NotifyInput): Promise<void> {
    const kind = this.deps.kinds.get(input.kind);
    if (!kind) throw new TypeError(`notify: the kind "${input.kind}" is not declared (NOTIFICATION_KINDS_KEY)`);
    const category = this.deps.categories.get(kind.category)!;
    const accounts = await this.accountsOf(trx, input.to);
    if (accounts.length === 0) return;
    const organizationId = input.organizationId ?? ('organization' in input.to ? input.to.organization : null);
    const channels = await this.deps.preferences.channelsOf(
      trx,
      accounts.map((a) => a.id),
      category.id,
      organizationId,
    );
    const words = new Map(accounts.map((account) => [account.id, this.wordsFor(isLocale(account.locale) ? account.locale : this.deps.defaultLocale, input)]));
    await trx
      .insertInto('notification')
      .values(
        accounts.map((account) => ({
          account_id: account.id,
          organization_id: organizationId,
          kind: kind.kind,
          category: category.id,
          ...words.get(account.id)!,
          url: input.url ?? null,
          in_app: channels.get(account.id)!.inApp,
          digest: channels.get(account.id)!.email === 'daily',
        })),
      )
      .execute();
    for (const account of accounts) {
      if (channels.get(account.id)!.email !== 'immediately') continue;
      const unsubscribeUrl = category.critical ? null : this.unsubscribeUrl(account.id, category.id);
      const message: MailMessage | undefined = input.email
        ? input.email(account, unsubscribeUrl)
        : { kind: 'notification', to: account.email, data: { ...words.get(account.id)!, url: input.url ?? null, unsubscribeUrl } };
      if (!message) continue;
      await this.deps.mail.enqueue(trx, category.critical ? message : { ...message, headers: this.unsubscribeHeaders(account.id, category.id) });
    }
  }

  private wordsFor(locale: Locale, input: NotifyInput): { title: string; body: string } {
    const say = (text: NotificationText) => (typeof text === 'function' ? text(locale) : this.deps.translator.text(locale, text));
    return { title: say(input.title), body: say(input.body) };
  }

  async unreadCount(accountId: string): Promise<number> {
    const row = await this.deps.db
      .selectFrom('notification')
      .select(sql<string>`count(*)`.as('n'))
      .where('account_id', '=', accountId)
      .where('in_app', '=', true)
      .where('read_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Newest first, a keyset page (`cursor`: older than it). */
  async list(accountId: string, query: { unread?: boolean; limit?: number; cursor?: string }): Promise<NotificationList> {
    const limit = query.limit ?? 20;
    let select = this.deps.db
      .selectFrom('notification')
      .select(NOTIFICATION_COLUMNS)
      .where('account_id', '=', accountId)
      .where('in_app', '=', true)
      .orderBy('seq', 'desc')
      .limit(limit + 1);
    if (query.unread) select = select.where('read_at', 'is', null);
    if (query.cursor) select = select.where('seq', '<', query.cursor as never);
    const rows = await select.execute();
    const page = rows.slice(0, limit);
    return {
      notifications: page.map(toNotification),
      'next-cursor': rows.length > limit ? String(page.at(-1)!.seq) : null,
      'unread-count': await this.unreadCount(accountId),
    };
  }

  /** What came after `cursor` (a stream's reconnect, or its wake-up), oldest first, at most 100. */
  async after(accountId: string, cursor: string): Promise<Notification[]> {
    const rows = await this.deps.db
      .selectFrom('notification')
      .select(NOTIFICATION_COLUMNS)
      .where('account_id', '=', accountId)
      .where('in_app', '=', true)
      .where('seq', '>', cursor as never)
      .orderBy('seq')
      .limit(100)
      .execute();
    return rows.map(toNotification);
  }

  /** The account's newest cursor ('0' when it has none): a new stream starts after it. */
  async latestCursor(accountId: string): Promise<string> {
    const row = await this.deps.db
      .selectFrom('notification')
      .select(sql<string>`coalesce(max(seq), 0)`.as('seq'))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return String(row?.seq ?? '0');
  }

  async markRead(accountId: string, input: MarkRead): Promise<void> {
    let update = this.deps.db.updateTable('notification').set({ read_at: new Date() }).where('account_id', '=', accountId).where('read_at', 'is', null);
    if (!input.all) update = update.where('id', 'in', input.ids ?? []);
    if (!input.all && (input.ids ?? []).length === 0) return;
    await update.execute();
  }

  async remove(accountId: string, id: string): Promise<void> {
    const gone = await this.deps.db.deleteFrom('notification').where('account_id', '=', accountId).where('id', '=', id).returning('id').executeTakeFirst();
    if (!gone) throw notFound('No such notification', { id });
  }

  /** The hourly purge: read notifications older than 90 days, and stream leases long expired. */
  async purge(): Promise<number> {
    const gone = await this.deps.db.deleteFrom('notification').where('read_at', '<', sql<Date>`now() - interval '90 days'`).returning('id').execute();
    await this.deps.db.deleteFrom('notification_stream').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
    return gone.length;
  }
}
