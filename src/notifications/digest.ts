/**
 * The daily digest (docs/notifications.md, "Email"): once a day at NOTIFICATION_DIGEST_AT (UTC),
 * once across instances (the day's row in `notification_digest_run` is inserted by one of them),
 * every account with notifications waiting for it gets one email of them all, in one transaction
 * with the day's row and their flags cleared. Nothing waiting: no email. Its List-Unsubscribe turns
 * off the email of every category it gathered.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { Mail } from '../mail/index.js';
import type { NotificationService } from './service.js';

export interface DigestDeps {
  db: DB;
  mail: Pick<Mail, 'enqueue'>;
  notifications: NotificationService;
  log: Logger;
  /** minutes after midnight UTC */
  atMinute: number;
}

/** The day (UTC) whose digest is due at `now`, or undefined before the digest time. */
export function dueDay(now: Date, atMinute: number): string | undefined {
  const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
  return minute >= atMinute ? now.toISOString().slice(0, 10) : undefined;
}

export class Digest {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: DigestDeps) {}

  start(everyMs = 30_000): void {
    this.timer = setInterval(
      () => void this.runIfDue().catch((err: Error) => this.deps.log.warn('notifications/digest-failed', `The daily digest failed: ${err.message}`)),
      everyMs,
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Sends the day's digest when it is due and no instance sent it: the number of emails. */
  async runIfDue(now = new Date()): Promise<number> {
    const day = dueDay(now, this.deps.atMinute);
    if (!day) return 0;
    return this.deps.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .insertInto('notification_digest_run')
        .values({ day })
        .onConflict((oc) => oc.column('day').doNothing())
        .returning('day')
        .executeTakeFirst();
      if (!claimed) return 0;
      const rows = await trx
        .selectFrom('notification as n')
        .innerJoin('account as a', 'a.id', 'n.account_id')
        .select(['n.id', 'n.account_id', 'n.category', 'n.title', 'n.body', 'n.url', 'n.created_at', 'a.email', 'a.name'])
        .where('n.digest', '=', true)
        .orderBy('n.account_id')
        .orderBy('n.seq')
        .forUpdate()
        .execute();
      const byAccount = new Map<string, typeof rows>();
      for (const row of rows) byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), row]);
      for (const [accountId, items] of byAccount) {
        const categories = [...new Set(items.map((i) => i.category))].sort().join(',');
        await this.deps.mail.enqueue(trx, {
          kind: 'notification-digest',
          to: items[0]!.email,
          data: {
            name: items[0]!.name,
            items: items.map((i) => ({ title: i.title, body: i.body, url: i.url, at: i.created_at })),
            unsubscribeUrl: this.deps.notifications.unsubscribeUrl(accountId, categories),
          },
          headers: this.deps.notifications.unsubscribeHeaders(accountId, categories),
        });
      }
      if (rows.length > 0) await sql`update notification set digest = false where id = any(${rows.map((r) => r.id)}::uuid[])`.execute(trx);
      if (byAccount.size > 0)
        this.deps.log.info('notifications/digest-sent', 'The daily digest went out', { day, accounts: byAccount.size, notifications: rows.length });
      return byAccount.size;
    });
  }
}
