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
import type { Mail } from '../mail/index.js';

export const WARN_BEFORE_DAYS = 30;

export class CertificateExpiryCheck {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: { db: DB; mail: Pick<Mail, 'enqueue'>; log: Logger; intervalMs: number; purge: () => Promise<void> }) {}

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
    const { db, mail, log } = this.deps;
    const warned = await db.transaction().execute(async (trx) => {
      const due = await trx
        .updateTable('saml_connection')
        .set({ expiry_warned_at: sql`now()` })
        .where('expiry_warned_at', 'is', null)
        .where('certificate_expires_at', '<', sql<Date>`now() + make_interval(days => ${WARN_BEFORE_DAYS})`)
        .returning(['organization_id', 'certificate_expires_at'])
        .execute();
      for (const connection of due) {
        const owners = await trx
          .selectFrom('membership')
          .innerJoin('account', 'account.id', 'membership.account_id')
          .innerJoin('organization', 'organization.id', 'membership.organization_id')
          .select(['account.email', 'organization.name'])
          .where('membership.organization_id', '=', connection.organization_id)
          .where('membership.role', '=', 'owner')
          .execute();
        for (const owner of owners) {
          await mail.enqueue(trx, {
            kind: 'sso-certificate-expiring',
            to: owner.email,
            data: { organization: owner.name, organizationId: connection.organization_id, expiresAt: new Date(connection.certificate_expires_at) },
          });
        }
        log.warn('sso/certificate-expiring', 'The SAML identity provider certificate expires soon; the owners were emailed', {
          'organization-id': connection.organization_id,
          'expires-at': new Date(connection.certificate_expires_at).toISOString(),
          owners: owners.length,
        });
      }
      return due.length;
    });
    await this.deps.purge();
    return warned;
  }
}
