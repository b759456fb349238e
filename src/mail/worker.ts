/**
 * The delivery worker: claims due messages from the outbox and sends them, with retries and
 * exponential backoff. It wakes every `pollMs` (messages queued by other instances, retries
 * that fall due) and at once after a local enqueue; since a nudge comes before the caller's
 * transaction commits, it then looks again shortly, a few times, until the message shows.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { MailDeliveryOutcome } from '../observability/events.js';
import type { ClaimedMail, Outbox, RetryPolicy } from './outbox.js';
import { describeSendError, type MailTransport } from './transport.js';

export interface MailWorkerOptions {
  outbox: Outbox;
  transport: MailTransport;
  log: Logger;
  pollMs: number;
  leaseMs: number;
  retry: RetryPolicy;
  /** messages claimed per pass, sent concurrently */
  batchSize?: number;
  /** told how each delivery attempt ended (metrics, src/observability/) */
  onDelivery?: (outcome: MailDeliveryOutcome) => void;
}

/** After a nudge: look again after 2, 4, 8 ... ms, for this long at most. */
const NUDGE_FOLLOW_MS = 2000;
const PURGE_EVERY_MS = 3_600_000;

export class MailWorker {
  private readonly batchSize: number;
  private readonly instance = randomUUID();
  private loop: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private follow: { delayMs: number; untilMs: number } | undefined;
  private pollFailures = 0;
  private lastPurgeMs = 0;

  constructor(private readonly options: MailWorkerOptions) {
    this.batchSize = options.batchSize ?? 10;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  start(): void {
    if (this.loop !== undefined) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** A message was just queued here: look for it now, and again shortly until it is committed. */
  nudge(): void {
    if (!this.running) return;
    this.follow = { delayMs: 2, untilMs: Date.now() + NUDGE_FOLLOW_MS };
    this.wake?.();
  }

  /**
   * Stops claiming, lets the sends in flight finish (at most `timeoutMs`), closes the
   * transport. A send cut off by the timeout is retried by whoever claims it after its lease.
   */
  async stop(timeoutMs: number): Promise<void> {
    const loop = this.loop;
    this.stopping = true;
    this.wake?.();
    if (loop !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      });
      const late = await Promise.race([loop.then(() => false), timedOut]);
      clearTimeout(timer);
      if (late) this.options.log.warn('mail/stop-timeout', `Mail sends still running after ${timeoutMs} ms; they will be retried after their lease`);
    }
    this.loop = undefined;
    await this.options.transport.close();
  }

  /** One pass: claims what is due and delivers it. Resolves to how many messages were claimed. */
  async runOnce(): Promise<number> {
    const claimId = `${this.instance}:${randomUUID()}`;
    const batch = await this.options.outbox.claim(claimId, this.batchSize, this.options.leaseMs);
    await Promise.all(batch.map((mail) => this.deliver(mail, claimId)));
    return batch.length;
  }

  private async run(): Promise<void> {
    const { log, pollMs } = this.options;
    while (!this.stopping) {
      let claimed = 0;
      const follow = this.follow;
      try {
        claimed = await this.runOnce();
        // found what the nudge was for (no newer nudge came meanwhile): back to plain polling
        if (claimed > 0 && follow && this.follow === follow) this.follow = undefined;
        if (this.pollFailures > 0) log.info('mail/poll-recovered', 'The mail worker reaches the database again');
        this.pollFailures = 0;
        await this.purgeNowAndThen();
      } catch (err) {
        // once at the first failure, then once a minute: a database outage must not flood the log
        if (this.pollFailures++ % Math.max(1, Math.round(60_000 / pollMs)) === 0) {
          log.warn('mail/poll-failed', `The mail worker could not read the outbox: ${describeSendError(err)}`);
        }
      }
      if (this.stopping) break;
      if (claimed >= this.batchSize) continue; // more may be due right now
      await this.sleep(this.nextDelay());
    }
  }

  private nextDelay(): number {
    const follow = this.follow;
    if (follow && Date.now() < follow.untilMs) {
      const delay = Math.min(follow.delayMs, this.options.pollMs);
      follow.delayMs *= 2;
      return delay;
    }
    this.follow = undefined;
    return this.options.pollMs;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private async deliver(mail: ClaimedMail, claimId: string): Promise<void> {
    const { outbox, transport, log, retry, onDelivery } = this.options;
    const about = { id: mail.id, kind: mail.kind, attempts: mail.attempts };
    let failure: string | undefined;
    try {
      await transport.send(mail);
    } catch (err) {
      failure = describeSendError(err);
    }
    try {
      if (failure === undefined) {
        onDelivery?.('sent');
        const recorded = await outbox.markSent(mail.id, claimId, transport.name === 'smtp');
        if (recorded) log.info('mail/sent', `Sent ${mail.kind} message ${mail.id}`, { ...about, transport: transport.name });
        else log.warn('mail/lease-lost', `Sent ${mail.kind} message ${mail.id} after its lease ran out; another instance may send it again`, about);
        return;
      }
      const outcome = await outbox.markAttemptFailed(mail.id, claimId, mail.attempts, failure, retry);
      onDelivery?.(outcome?.status === 'failed' ? 'failed' : 'retry');
      if (!outcome) {
        log.warn('mail/lease-lost', `Sending ${mail.kind} message ${mail.id} failed after its lease ran out`, { ...about, error: failure });
      } else if (outcome.status === 'failed') {
        log.error('mail/failed', `Gave up on ${mail.kind} message ${mail.id} after ${mail.attempts} attempts: ${failure}`, { ...about, error: failure });
      } else {
        log.warn('mail/retry', `Sending ${mail.kind} message ${mail.id} failed; retrying at ${outcome.nextAttemptAt.toISOString()}`, {
          ...about,
          error: failure,
          'next-attempt-at': outcome.nextAttemptAt.toISOString(),
        });
      }
    } catch (err) {
      // the outcome could not be recorded: the lease runs out and the message is tried again
      log.warn('mail/record-failed', `Could not record the outcome of ${mail.kind} message ${mail.id}: ${describeSendError(err)}`, about);
    }
  }

  private async purgeNowAndThen(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurgeMs < PURGE_EVERY_MS) return;
    this.lastPurgeMs = now;
    const deleted = await this.options.outbox.purge();
    if (deleted > 0) this.options.log.info('mail/purged', `Deleted ${deleted} old sent or failed messages from the outbox`, { deleted });
  }
}
