/**
 * Deleting objects from the store (docs/files.md, "Deletion"): a durable-job queue
 * (src/runtime/jobs.ts) on `storage_deletion`, whose rows the trigger of migration 0026 adds in the
 * transaction that deletes a file's row (its owner's deletion, a replaced avatar, an expired
 * upload). The store away: the row waits and is tried again with backoff; it is never lost.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { exponentialDelayMs, JobWorker } from '../runtime/jobs.js';
import type { StorageDriver } from './driver.js';

interface Deletion {
  id: string;
  key: string;
  attempts: number;
}

const BACKOFF = { baseMs: 5000, maxMs: 3_600_000 };

export class StorageDeletions extends JobWorker<Deletion> {
  constructor(
    private readonly deps: { db: DB; driver: StorageDriver; log: Logger; pollMs: number; leaseMs: number },
    /** runs hourly: deletes uploads never completed (their objects come here) */
    private readonly purgePending: () => Promise<number>,
  ) {
    super({ name: 'storage-deletions', noun: 'deletion', log: deps.log, pollMs: deps.pollMs, concurrency: 4 });
  }

  protected async claim(claimId: string, limit: number): Promise<Deletion[]> {
    const { rows } = await sql<Deletion>`
      update storage_deletion
      set locked_until = now() + (${this.deps.leaseMs}::bigint * interval '1 millisecond'), locked_by = ${claimId}, attempts = attempts + 1
      where id in (
        select id from storage_deletion
        where next_attempt_at <= now() and (locked_until is null or locked_until <= now())
        order by next_attempt_at, id limit ${limit} for update skip locked
      )
      returning id, key, attempts`.execute(this.deps.db);
    return rows;
  }

  protected async attempt(job: Deletion, claimId: string): Promise<void> {
    try {
      await this.deps.driver.remove(job.key);
      await this.deps.db.deleteFrom('storage_deletion').where('id', '=', job.id).where('locked_by', '=', claimId).execute();
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      const next = new Date(Date.now() + exponentialDelayMs(BACKOFF, job.attempts));
      this.deps.log.warn('storage-deletions/retry', `An object could not be deleted from the store (${message}); trying again at ${next.toISOString()}`, {
        'deletion-id': job.id,
        attempt: job.attempts,
      });
      await this.deps.db
        .updateTable('storage_deletion')
        .set({ next_attempt_at: next, locked_until: null, locked_by: null, last_error: message })
        .where('id', '=', job.id)
        .where('locked_by', '=', claimId)
        .execute();
    }
  }

  protected override purge(): Promise<number> {
    return this.purgePending();
  }
}
