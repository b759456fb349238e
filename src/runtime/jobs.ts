/**
 * The one durable-job loop (docs/architecture.md, "Durable jobs"): what the mail outbox, the
 * outgoing webhooks and the Stripe sync share. A queue is a table whose rows a service writes in
 * the transaction of the change that causes them; its {@link JobQueue} says how to claim due rows
 * with a lease (its own SQL: `FOR UPDATE SKIP LOCKED`, fairness rules) and how to run one claimed
 * row and record its outcome. This runner owns everything else:
 * - slots: up to `concurrency` jobs run at once on this instance; it claims again as each ends,
 *   so a job that hangs holds its own slot only, never a batch (or, `batches`, a pass claims a
 *   batch and waits for it);
 * - pace: it looks every `pollMs` (rows written by other instances, retries falling due), at once
 *   after {@link JobRunner.nudge}, and, after a nudge that comes before the writer's commit
 *   (`follow`), again after 2, 4, 8 … ms for two seconds until something is found;
 * - a claim id per pass (`<instance>:<random>`): the lease's owner, which the queue checks when it
 *   records an outcome, so an attempt that outlived its lease changes nothing;
 * - a failing database: logged once, then once a minute, and `<name>/poll-recovered` after;
 * - stop: no more claims, the jobs in flight finish (at most the timeout; one cut off is claimed
 *   again by anyone after its lease);
 * - hourly purge of old rows, when the queue has one;
 * - backoff: {@link exponentialDelayMs} and {@link scheduledDelayMs} turn attempt counts into delays.
 * It knows no feature; a queue's rows, statuses and retry rules are the queue's.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger.js';

/** One queue: how to claim due jobs under a lease, and how to run one. */
export interface JobQueue<J> {
  /** Claims at most `limit` due jobs for `claimId` (their lease's owner). */
  claim(claimId: string, limit: number): Promise<J[]>;
  /** Runs one claimed job and records its outcome (only while `claimId` still holds it). Should not throw; a throw is logged. */
  run(job: J, claimId: string): Promise<void>;
  /** Deletes old finished jobs; resolves to how many. Called hourly when present. */
  purge?(): Promise<number>;
}

export interface JobRunnerOptions<J> {
  /** the log ids' prefix (`mail` → `mail/poll-failed`) and what the messages call the queue */
  name: string;
  /** what the messages call a job (`message`, `delivery`) */
  noun: string;
  queue: JobQueue<J>;
  log: Logger;
  /** how often to look for due jobs besides nudges, ms */
  pollMs: number;
  /** jobs run at once on this instance */
  concurrency: number;
  /**
   * `slots` (default): claim again as each job ends. `batches`: claim up to `concurrency`, wait for
   * all of them, then claim again at once when the batch was full, else after the poll (the
   * mail outbox: its retries fall due between passes, never while a pass runs).
   */
  mode?: 'slots' | 'batches';
  /** describes an error for a log line (default: its message) */
  describeError?: (err: unknown) => string;
  /** how often `purge` runs, ms (default hourly) */
  purgeEveryMs?: number;
}

/** After a following nudge: look again after 2, 4, 8 ... ms, for this long at most. */
export const NUDGE_FOLLOW_MS = 2000;
const PURGE_EVERY_MS = 3_600_000;

export class JobRunner<J> {
  private readonly instance = randomUUID();
  private loop: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private woken = false;
  private follow: { delayMs: number; untilMs: number } | undefined;
  private pollFailures = 0;
  private lastPurgeMs = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: JobRunnerOptions<J>) {}

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  start(): void {
    if (this.loop !== undefined) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /**
   * Jobs were written: look now. `follow`: the writer has not committed yet (a nudge from inside
   * its transaction), so look again shortly, a few times, until something is claimed.
   */
  nudge(options: { follow?: boolean } = {}): void {
    if (this.loop === undefined || this.stopping) return;
    if (options.follow) this.follow = { delayMs: 2, untilMs: Date.now() + NUDGE_FOLLOW_MS };
    this.woken = true;
    this.wake?.();
  }

  /** Stops claiming and waits (at most `timeoutMs`) for the jobs in flight. Resolves true when they all ended in time. */
  async stop(timeoutMs: number): Promise<boolean> {
    const loop = this.loop;
    this.stopping = true;
    this.wake?.();
    let late = false;
    if (loop !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const finished = loop.then(() => Promise.all([...this.inFlight])).then(() => false);
      late = await Promise.race([
        finished,
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (late) {
        this.options.log.warn(
          `${this.options.name}/stop-timeout`,
          `${this.options.name}: jobs still running after ${timeoutMs} ms; they are tried again after their lease`,
        );
      }
    }
    this.loop = undefined;
    return !late;
  }

  /** One pass: claims what is due (as many as free slots allow) and waits for those jobs. Resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    const batch = await this.claimAndStart();
    await Promise.all(batch);
    return batch.length;
  }

  private async claimAndStart(): Promise<Array<Promise<void>>> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return [];
    const claimId = `${this.instance}:${randomUUID()}`;
    const batch = await this.options.queue.claim(claimId, free);
    return batch.map((job) => {
      const running = this.runJob(job, claimId).finally(() => {
        this.inFlight.delete(running);
        if (this.options.mode === 'batches') return;
        // its slot is free: another job may go now
        this.woken = true;
        this.wake?.();
      });
      this.inFlight.add(running);
      return running;
    });
  }

  private async runJob(job: J, claimId: string): Promise<void> {
    try {
      await this.options.queue.run(job, claimId);
    } catch (err) {
      // the outcome is not recorded: the lease runs out and the job is tried again
      this.options.log.warn(`${this.options.name}/job-error`, `${this.options.name}: a ${this.options.noun} failed unexpectedly: ${this.describe(err)}`);
    }
  }

  private describe(err: unknown): string {
    return this.options.describeError ? this.options.describeError(err) : err instanceof Error ? err.message : String(err);
  }

  private async run(): Promise<void> {
    const { log, pollMs, name } = this.options;
    while (!this.stopping) {
      this.woken = false;
      const follow = this.follow;
      try {
        // the jobs run on by themselves: `inFlight` holds each until it ends
        const started = await this.claimAndStart();
        if (this.options.mode === 'batches') {
          await Promise.all(started);
          // a full batch: more may be due right now
          if (started.length >= this.options.concurrency) this.woken = true;
        }
        // found what the following nudge was for (no newer one came meanwhile): back to plain polling
        if (started.length > 0 && follow && this.follow === follow) this.follow = undefined;
        if (this.pollFailures > 0) log.info(`${name}/poll-recovered`, `The ${name} worker reaches the database again`);
        this.pollFailures = 0;
        await this.purgeNowAndThen();
      } catch (err) {
        // once at the first failure, then once a minute: a database outage must not flood the log
        if (this.pollFailures++ % Math.max(1, Math.round(60_000 / pollMs)) === 0) {
          log.warn(`${name}/poll-failed`, `The ${name} worker could not read its queue: ${this.describe(err)}`);
        }
      }
      if (this.stopping) break;
      // woken during the pass: a commit after the claim, or a job that ended (its slot is free)
      if (this.woken) continue;
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

  private async purgeNowAndThen(): Promise<void> {
    const { queue, log, name, purgeEveryMs = PURGE_EVERY_MS } = this.options;
    if (!queue.purge) return;
    const now = Date.now();
    if (now - this.lastPurgeMs < purgeEveryMs) return;
    this.lastPurgeMs = now;
    const deleted = await queue.purge();
    if (deleted > 0) log.info(`${name}/purged`, `Deleted ${deleted} old finished ${this.options.noun}s of the ${name} queue`, { deleted });
  }
}

/**
 * A feature's worker over one queue: the subclass is the queue (its `claim`, `attempt` and, when
 * it has old rows to delete, `purge`), and start, nudge, stop and runOnce are its runner's.
 */
export abstract class JobWorker<J> {
  protected readonly runner: JobRunner<J>;

  constructor(options: Omit<JobRunnerOptions<J>, 'queue'>) {
    // the hooks run only once started, after the subclass has set its fields; `purge` is a
    // prototype method, so it is there already while this constructor runs
    this.runner = new JobRunner<J>({
      ...options,
      queue: {
        claim: (claimId, limit) => this.claim(claimId, limit),
        run: (job, claimId) => this.attempt(job, claimId),
        purge: this.purge?.bind(this),
      },
    });
  }

  /** {@link JobQueue.claim}: claims at most `limit` due jobs for `claimId`. */
  protected abstract claim(claimId: string, limit: number): Promise<J[]>;
  /** {@link JobQueue.run}: runs one claimed job and records its outcome. */
  protected abstract attempt(job: J, claimId: string): Promise<void>;
  /** {@link JobQueue.purge}: deletes old finished jobs; resolves to how many. */
  protected purge?(): Promise<number>;

  get running(): boolean {
    return this.runner.running;
  }

  start(): void {
    this.runner.start();
  }

  /** Jobs were committed (here or on another instance): look now. */
  nudge(): void {
    this.runner.nudge();
  }

  /** Stops claiming and waits (at most `timeoutMs`) for the jobs in flight; one cut off is claimed again after its lease. */
  async stop(timeoutMs: number): Promise<void> {
    await this.runner.stop(timeoutMs);
  }

  /** One pass: claims what is due (as many as free slots allow) and waits for those jobs. Resolves to how many were claimed. */
  runOnce(): Promise<number> {
    return this.runner.runOnce();
  }
}

/** Exponential backoff: doubling from `baseMs`, capped at `maxMs`. */
export interface ExponentialBackoff {
  baseMs: number;
  maxMs: number;
}

/** The delay after `attempts` failed attempts: doubling from `baseMs`, capped, with up to 10% jitter. */
export function exponentialDelayMs(policy: ExponentialBackoff, attempts: number, random = Math.random): number {
  const exponential = policy.baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40);
  const delay = Math.min(exponential, policy.maxMs);
  return Math.round(delay + delay * 0.1 * random());
}

/**
 * The delay after `attempts` failed attempts from a schedule (`[5000, 30000, …]` ms between
 * attempts): undefined once it is spent (give up), or with `repeatLast` its last delay forever.
 */
export function scheduledDelayMs(scheduleMs: readonly number[], attempts: number, options: { repeatLast?: boolean } = {}): number | undefined {
  if (scheduleMs.length === 0) return undefined;
  const index = Math.max(attempts - 1, 0);
  if (index < scheduleMs.length) return scheduleMs[index];
  return options.repeatLast ? scheduleMs[scheduleMs.length - 1] : undefined;
}
