/**
 * The daily look at IdP certificates (docs/sso.md, "2. Connect the identity provider (owners)"):
 * the owners of an organization whose connection's certificate expires within 30 days get one
 * email per certificate (`expiry_warned_at`, reset when new metadata brings another). The claim
 * is an UPDATE … RETURNING, so several instances warn once. Old SAML requests and assertion ids
 * are purged on the same beat.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import { msg, phrase } from '../i18n/messages.js';

export const WARN_BEFORE_DAYS = 30;

export class CertificateExpiryCheck {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly deps: { db: DB; notifications: Pick<NotificationService, 'notify'>; log: Logger; intervalMs: number; purge: () => Promise<void> },
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce().catch((err: Error) =>
        this.deps.log.error('sso/expiry-check-failed', `Certificate expiry check failed: ${err.message}`, { class: err.constructor?.name }),
      );
    };
    this.timer = setInterval(tick, this.deps.intervalMs);
    this.timer.unref();
    // the first look soon after start, not a day later
    this.first = setTimeout(tick, 1000);
    this.first.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.first) clearTimeout(this.first);
    await this.running;
  }

  /** Warns the owners of every connection whose certificate expires within 30 days and was not warned about. */
  async runOnce(): Promise<number> {
    const { db, notifications, log } = this.deps;
    const warned = await db.transaction().execute(async (trx) => {
      const due = await trx
        .updateTable('saml_connection')
        .set({ expiry_warned_at: sql`now()` })
        .where('expiry_warned_at', 'is', null)
        .where('certificate_expires_at', '<', sql<Date>`now() + make_interval(days => ${WARN_BEFORE_DAYS})`)
        .returning(['organization_id', 'certificate_expires_at'])
        .execute();
      for (const connection of due) {
        const org = await trx.selectFrom('organization').select('name').where('id', '=', connection.organization_id).executeTakeFirstOrThrow();
        const expiresAt = new Date(connection.certificate_expires_at);
        await notifications.notify(trx, {
          kind: 'sso-certificate-expiring',
          to: { organization: connection.organization_id, roles: ['owner'] },
          title: phrase('The single sign-on certificate of {organization} expires on {date}', {
            organization: org.name,
            date: expiresAt.toISOString().slice(0, 10),
          }),
          body: msg('Nobody can sign in through it once it expires: paste the identity provider’s new metadata on the Single sign-on page.'),
          url: `/orgs/${connection.organization_id}/sso`,
          email: (account) => ({
            kind: 'sso-certificate-expiring',
            to: account.email,
            data: { organization: org.name, organizationId: connection.organization_id, expiresAt },
          }),
        });
        log.warn('sso/certificate-expiring', 'The SAML identity provider certificate expires soon; the owners were told', {
          'organization-id': connection.organization_id,
          'expires-at': new Date(connection.certificate_expires_at).toISOString(),
        });
      }
      return due.length;
    });
    await this.deps.purge();
    return warned;
  }
}
