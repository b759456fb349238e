/**
 * The delivery worker: the outbox as a durable-job queue (src/runtime/jobs.ts): claims due
 * messages and sends them, with retries and exponential backoff. A local enqueue nudges it; since
 * that nudge comes before the caller's transaction commits, the runner then looks again shortly,
 * a few times, until the message shows.
 */
import type { Logger } from '../logging/logger.js';
import type { MailDeliveryOutcome } from '../observability/events.js';
import { JobWorker } from '../runtime/jobs.js';
import type { ClaimedMail, Outbox, RetryPolicy } from './outbox.js';
import { describeSendError, type MailTransport } from './transport.js';

export interface MailWorkerOptions {
  outbox: Outbox;
  transport: MailTransport;
  log: Logger;
  pollMs: number;
  leaseMs: number;
  retry: RetryPolicy;
  /** messages sent at once */
  batchSize?: number;
  /** told how each delivery attempt ended (metrics, src/observability/) */
  onDelivery?: (outcome: MailDeliveryOutcome) => void;
}

export class MailWorker extends JobWorker<ClaimedMail> {
  constructor(private readonly options: MailWorkerOptions) {
    super({
      name: 'mail',
      noun: 'message',
      log: options.log,
      pollMs: options.pollMs,
      concurrency: options.batchSize ?? 10,
      mode: 'batches',
      describeError: describeSendError,
    });
  }

  /** A message was just queued here: look for it now, and again shortly until it is committed. */
  override nudge(): void {
    this.runner.nudge({ follow: true });
  }

  /**
   * Stops claiming, lets the sends in flight finish (at most `timeoutMs`), closes the
   * transport. A send cut off by the timeout is retried by whoever claims it after its lease.
   */
  override async stop(timeoutMs: number): Promise<void> {
    await super.stop(timeoutMs);
    await this.options.transport.close();
  }

  protected claim(claimId: string, limit: number): Promise<ClaimedMail[]> {
    return this.options.outbox.claim(claimId, limit, this.options.leaseMs);
  }

  protected override purge(): Promise<number> {
    return this.options.outbox.purge();
  }

  protected async attempt(mail: ClaimedMail, claimId: string): Promise<void> {
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
}
