/**
 * The audit entries of refused log-ins of existing accounts, written after the answer: the work
 * never competes with the answer's delivery (PGlite runs its queries on this thread), and is
 * tracked so a stop waits for it. No one acted as the account: the actor is empty.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { appendAccountAudit, type AuditCap, type ClientOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';

/**
 * Failed log-ins recorded per account: beyond this many in the window, failures are only logged
 * and counted (metrics). The rate limits bound failures per address, not per account; this
 * bounds what any number of addresses can add to one account's audit log (docs/audit.md).
 */
export const FAILED_LOG_IN_ENTRIES: AuditCap = { count: 20, seconds: 15 * 60 };
/** the pause between a refused log-in's answer and its audit entry, ms (see AccountService.logIn) */
const AFTER_ANSWER_MS = 20;

export class RefusedLogIns {
  /** entries still being written after their answer */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: DB,
    private readonly log: Logger,
  ) {}

  /** Records a refused log-in of `accountId` once `answered` has resolved (the answer was handed to the socket). */
  record(accountId: string, client: ClientOrigin, answered: Promise<unknown>): void {
    const work: Promise<void> = answered
      .then(() => sleep(AFTER_ANSWER_MS))
      .then(() =>
        appendAccountAudit(
          this.db,
          {
            action: 'account.log-in-failed',
            accountId,
            actor: {},
            details: { reason: 'wrong-password' },
            origin: client,
          },
          FAILED_LOG_IN_ENTRIES,
        ),
      )
      .then(() => undefined)
      .catch((err: Error) => this.log.error('account/audit-failed', `Could not record a refused log-in: ${err.message}`, { class: err.constructor?.name }))
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  /** Waits for the entries answered but not yet written (on stop, and in tests). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
