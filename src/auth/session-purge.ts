/**
 * Deletes sessions (refresh families, their tokens by cascade) that can matter to nothing any
 * more, so the tables do not grow with every log-in for ever:
 * - a revoked family once every access token of it has expired: instances learn of revocations
 *   from these rows (src/auth/revoked-sessions.ts loads the last access-token lifetime's at start),
 *   so a row stays the access-token lifetime plus an hour;
 * - an expired family, the same time after it expired (its refresh tokens are refused already).
 * A deleted account's families are revoked ones (their account link set null): they go the same way.
 * Every instance runs it hourly; concurrent deletes of the same rows are harmless.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';

const KEEP_BEYOND_TOKENS_MS = 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const FIRST_PURGE_AFTER_MS = 60 * 1000;

/** Deletes the families ended longer ago than the access-token lifetime plus an hour; returns how many. */
export async function purgeEndedSessions(db: DB, accessTtlSeconds: number): Promise<number> {
  const keepSeconds = accessTtlSeconds + KEEP_BEYOND_TOKENS_MS / 1000;
  const result = await sql<{ id: string }>`
    delete from refresh_family
    where coalesce(revoked_at, expires_at) < now() - ${keepSeconds}::int * interval '1 second'
    returning id`.execute(db);
  return result.rows.length;
}

/** The hourly purge; `stop` ends it (the system stops it before the database closes). */
export function startSessionPurge(db: DB, accessTtlSeconds: number, log: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running = purgeEndedSessions(db, accessTtlSeconds)
      .then((deleted) => {
        if (deleted > 0) log.info('auth/sessions-purged', `Deleted ${deleted} ended sessions`, { deleted });
      })
      .catch((err: Error) => log.warn('auth/session-purge-failed', `Purging ended sessions failed: ${err.message}`, { class: err.constructor?.name }))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(() => {
    run();
    timer = setInterval(run, PURGE_EVERY_MS);
    timer.unref();
  }, FIRST_PURGE_AFTER_MS);
  first.unref();
  let timer: NodeJS.Timeout | undefined;
  return {
    async stop() {
      clearTimeout(first);
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
