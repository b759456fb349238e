/**
 * Password hashing with argon2id at OWASP's parameters (m = 19 MiB, t = 2, p = 1). The
 * native library hashes on libuv's thread pool, so a burst of log-ins does not stall the
 * event loop. Passwords are hashed whole: no truncation at any length the API accepts.
 */
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';

const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most `limit` hashes at once. argon2 is CPU-bound: more concurrent hashes than cores add
 * no throughput, only 19 MiB each and contention for libuv's pool (which file I/O shares).
 */
class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    // a waiter is handed the slot of the task that ends (`active` unchanged): a newcomer arriving
    // between the release and the waiter's wake-up cannot take it and make one hash too many
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * How many hashes run at once when PASSWORD_HASH_CONCURRENCY is not set: one per core on
 * PostgreSQL; one on the embedded database (PGlite), whose queries run on the main thread and
 * need the other core anyway, where each concurrent hash would add its 19 MiB to the peak of a
 * process meant for small machines (docs/performance.md, "footprint, round 3").
 */
export function defaultHashConcurrency(databaseUrl: string | undefined): number {
  return databaseUrl?.startsWith('postgres') ? Math.max(1, availableParallelism()) : 1;
}

export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  private readonly slots: Semaphore;

  constructor(concurrency: number) {
    this.slots = new Semaphore(concurrency);
  }

  hash(password: string): Promise<string> {
    return this.slots.run(() => hash(password, OPTIONS));
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await this.slots.run(() => verify(passwordHash, password));
    } catch {
      return false;
    }
  }

  /**
   * Spends the same work as a real verification and fails: used for unknown emails, so the
   * answer's timing does not tell which emails have accounts.
   */
  async verifyNothing(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(32).toString('base64url'));
    await this.verify(await this.dummy, password);
    return false;
  }
}
