/**
 * The durable-job runner (src/runtime/jobs.ts) with a queue held in memory: the runner's own
 * rules (slots, nudges, stop, failures, purge, backoff). The queues on tables (mail, webhooks,
 * Stripe sync) are tested through their modules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LevelFilter } from '../../src/logging/filter.js';
import { type LogEntry, LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';
import { exponentialDelayMs, type JobQueue, JobRunner, scheduledDelayMs } from '../../src/runtime/jobs.js';

function logger() {
  const entries: LogEntry[] = [];
  const backend = new LogBackend(new LevelFilter([{ ns: '*', level: 'trace' }]), [{ write: (e) => entries.push({ ...e }) }], createRedactor());
  return { log: backend.logger('saas.test'), ids: () => entries.map((e) => e.id) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Jobs are numbers; each runs until released. */
class MemoryQueue implements JobQueue<number> {
  due: number[] = [];
  running = 0;
  maxRunning = 0;
  done: number[] = [];
  claims: string[] = [];
  failClaims = 0;
  purges = 0;
  private releases: Array<() => void> = [];
  hold = false;

  async claim(claimId: string, limit: number): Promise<number[]> {
    if (this.failClaims > 0) {
      this.failClaims--;
      throw new Error('database down');
    }
    this.claims.push(claimId);
    return this.due.splice(0, limit);
  }
  async run(job: number): Promise<void> {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    if (this.hold) await new Promise<void>((r) => this.releases.push(r));
    this.running--;
    if (job < 0) throw new Error(`job ${job} broke`);
    this.done.push(job);
  }
  async purge(): Promise<number> {
    this.purges++;
    return 2;
  }
  release(): void {
    for (const r of this.releases.splice(0)) r();
  }
}

describe('the job runner', () => {
  it('runs at most `concurrency` jobs at once and claims again as each ends', async () => {
    const queue = new MemoryQueue();
    const { log, ids } = logger();
    const runner = new JobRunner({ name: 'test', noun: 'job', queue, log, pollMs: 60_000, concurrency: 3 });
    queue.hold = true;
    queue.due = [1, 2, 3, 4, 5, 6, 7];
    runner.start();
    await until(() => queue.running === 3, 'three running');
    assert.equal(queue.due.length, 4, 'the others wait for a slot');
    queue.hold = false;
    queue.release();
    await until(() => queue.done.length === 7, 'all done');
    assert.equal(queue.maxRunning, 3);
    // each claim its own id: `<instance>:<random>`, the instance part the same
    const instances = new Set(queue.claims.map((c) => c.split(':')[0]));
    assert.equal(instances.size, 1);
    assert.equal(new Set(queue.claims).size, queue.claims.length);
    assert.equal(queue.purges, 1, 'purged at the first pass, then hourly');
    assert.ok(ids().includes('test/purged'));
    assert.equal(await runner.stop(1000), true);
    assert.equal(runner.running, false);
  });

  it('wakes on a nudge long before its poll, and follows a nudge made before the commit', async () => {
    const queue = new MemoryQueue();
    const { log } = logger();
    const runner = new JobRunner({ name: 'test', noun: 'job', queue, log, pollMs: 60_000, concurrency: 2 });
    runner.start();
    await until(() => queue.claims.length === 1, 'the first pass');
    queue.due.push(1);
    runner.nudge();
    await until(() => queue.done.includes(1), 'the nudged job');
    // the writer nudges, then commits a little later: the runner looks again until it shows
    runner.nudge({ follow: true });
    await new Promise((r) => setTimeout(r, 30));
    queue.due.push(2);
    await until(() => queue.done.includes(2), 'the job committed after its nudge');
    await runner.stop(1000);
  });

  it('logs a failing claim once, then its recovery; a job that throws is logged and the loop goes on', async () => {
    const queue = new MemoryQueue();
    const { log, ids } = logger();
    const runner = new JobRunner({ name: 'test', noun: 'job', queue, log, pollMs: 10, concurrency: 2 });
    queue.failClaims = 5;
    queue.due = [-1, 3];
    runner.start();
    await until(() => queue.done.includes(3), 'the job after the outage');
    assert.equal(ids().filter((id) => id === 'test/poll-failed').length, 1);
    assert.equal(ids().filter((id) => id === 'test/poll-recovered').length, 1);
    assert.ok(ids().includes('test/job-error'));
    await runner.stop(1000);
  });

  it('stop waits for the jobs in flight, at most its timeout, and claims nothing after', async () => {
    const queue = new MemoryQueue();
    const { log, ids } = logger();
    const runner = new JobRunner({ name: 'test', noun: 'job', queue, log, pollMs: 60_000, concurrency: 2 });
    queue.hold = true;
    queue.due = [1];
    runner.start();
    await until(() => queue.running === 1, 'running');
    assert.equal(await runner.stop(20), false, 'cut off by the timeout');
    assert.ok(ids().includes('test/stop-timeout'));
    const claims = queue.claims.length;
    queue.due.push(2);
    runner.nudge();
    queue.hold = false;
    queue.release();
    await until(() => queue.done.includes(1), 'the job ends anyway');
    assert.equal(queue.claims.length, claims, 'no claim after stop');
    assert.equal(await runner.runOnce(), 1, 'runOnce still works by hand');
  });

  it('computes backoff: exponential with a cap and jitter, and schedules spent or repeated', () => {
    const policy = { baseMs: 1000, maxMs: 60_000 };
    assert.deepEqual(
      [1, 2, 3, 7, 30].map((n) => exponentialDelayMs(policy, n, () => 0)),
      [1000, 2000, 4000, 60_000, 60_000],
    );
    assert.equal(
      exponentialDelayMs(policy, 1, () => 0.999),
      1100,
    );
    const schedule = [5000, 30_000, 120_000];
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => scheduledDelayMs(schedule, n)),
      [5000, 30_000, 120_000, undefined],
    );
    assert.deepEqual(
      [3, 4, 99].map((n) => scheduledDelayMs(schedule, n, { repeatLast: true })),
      [120_000, 120_000, 120_000],
    );
    assert.equal(scheduledDelayMs([], 1, { repeatLast: true }), undefined);
  });
});
