/**
 * Verifies presented API keys. A key is looked up once per instance (by its SHA-256, a unique
 * index) and then kept in memory, so a request with a known key costs one hash and one Map
 * lookup, no query: the membership lookup an account's request makes on an organization route
 * is not needed either (the key's role is the membership's).
 *
 * Keeping keys in memory needs them forgotten the moment they stop being valid, on every
 * instance: a trigger (migration 0010) notifies `api_key_revoked` with the key's id when a key is
 * revoked or deleted (its organization deleted), delivered at commit to every instance's
 * database listener (src/db/listener.ts). The revoking instance also forgets the key itself,
 * right after its commit. While the listener's connection is down, the cached keys are
 * re-checked every second (and every 30 seconds anyway). A lookup that was under way while a
 * key was forgotten does not cache what it read (it may predate the revocation).
 *
 * What a flood of invalid keys costs: a malformed key (shape or checksum, format.ts) is refused
 * from its text; a key found unknown or revoked once is remembered as such (no key ever comes
 * back, and a new key's random secret is never one presented before), so it is refused from
 * memory after; every lookup that finds no live key takes a point from the client address's
 * budget (API_KEY_LIMIT_ADDRESS, default 20 a minute; Redis or the cluster's primary when
 * shared), and an address without points gets 429 before any lookup.
 *
 * `last_used_at` is written at most once a minute per key and instance (the statement itself
 * skips a row written less than a minute ago by another instance), after the answer: never a
 * write per request.
 */
import { msg } from '../i18n/messages.js';
import { sql } from 'kysely';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitSetting } from '../config.js';
import type { ApiKeyCheck } from '../auth/authenticator.js';
import { addressKey, counter, take, type LimiterStore } from '../auth/rate-limit.js';
import type { DB } from '../db/database.js';
import type { ChannelSubscriber, DatabaseListener } from '../db/listener.js';
import { HttpError, unauthorized } from '../http/errors.js';
import type { ApiKeyCaller } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { parseApiKey } from './format.js';

export const API_KEY_CHANNEL = 'api_key_revoked';
/** how often `last_used_at` is written per key, at most */
export const LAST_USED_EVERY_MS = 60_000;
// bounds: the caches hold hashes (64 characters), never request input
const CACHE_MAX = 10_000;
const REFUSED_MAX = 10_000;
const RECHECK_CHUNK = 500;

export const MALFORMED_KEY = msg('Malformed API key');
export const INVALID_KEY = msg('Invalid or revoked API key');

interface CachedKey {
  caller: ApiKeyCaller;
  /** when `last_used_at` was last written (or read), epoch ms */
  lastUsedMs: number;
}

export interface ApiKeyVerifierOptions {
  db: DB;
  log: Logger;
  /** lookups that find no live key, per client address (API_KEY_LIMIT_ADDRESS); null: unlimited */
  limit: RateLimitSetting | null;
  store: LimiterStore;
  /** hears revocations; absent, only this process's own are known (tests) */
  listener?: DatabaseListener;
}

export class ApiKeyVerifier implements ApiKeyCheck, ChannelSubscriber {
  readonly channel = API_KEY_CHANNEL;
  // key hash -> the key; key id -> its hash, to forget it by id
  private readonly valid = new Map<string, CachedKey>();
  private readonly hashById = new Map<string, string>();
  // hashes of keys found unknown or revoked
  private readonly refused = new Set<string>();
  // bumped whenever keys may have been forgotten: a lookup that started before does not cache its row
  private generation = 0;
  private readonly failures: RateLimiterAbstract | null;
  private readonly writes = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: ApiKeyVerifierOptions) {
    this.failures = counter('api-key-failures-address', options.limit, options.store);
    options.listener?.subscribe(this);
  }

  /** The key's caller, or the answer for it: 401 (malformed, unknown, revoked) or 429 (too many failures from the address). */
  verify(key: string, address: string): ApiKeyCaller | HttpError | Promise<ApiKeyCaller | HttpError> {
    const parsed = parseApiKey(key);
    if (!parsed) return unauthorized(MALFORMED_KEY);
    const cached = this.valid.get(parsed.hash);
    if (cached) {
      this.touch(cached);
      return cached.caller;
    }
    if (this.refused.has(parsed.hash)) return unauthorized(INVALID_KEY);
    return this.lookUp(parsed.hash, address);
  }

  /** Forgets a key at once (this instance revoked it and committed; or a notification said so). */
  forget(keyId: string): void {
    this.generation++;
    const hash = this.hashById.get(keyId);
    if (hash === undefined) return;
    this.hashById.delete(keyId);
    this.valid.delete(hash);
    this.refuse(hash);
  }

  onNotification(keyId: string): void {
    this.forget(keyId);
  }

  /** Re-checks every cached key: the listener may have missed revocations or deletions. */
  async catchUp(): Promise<void> {
    this.generation++;
    const ids = [...this.hashById.keys()];
    for (let i = 0; i < ids.length; i += RECHECK_CHUNK) {
      const chunk = ids.slice(i, i + RECHECK_CHUNK);
      const live = await this.options.db.selectFrom('api_key').select('id').where('id', 'in', chunk).where('revoked_at', 'is', null).execute();
      const alive = new Set(live.map((r) => r.id));
      for (const id of chunk) if (!alive.has(id)) this.forget(id);
    }
  }

  /** number of keys held (for tests and diagnostics) */
  get size(): number {
    return this.valid.size;
  }

  /** Resolves when the `last_used_at` writes under way are done. */
  async settle(): Promise<void> {
    await Promise.all([...this.writes]);
  }

  /** Starts no more writes and waits for those under way; call before the database closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settle();
  }

  private async lookUp(hash: string, address: string): Promise<ApiKeyCaller | HttpError> {
    const client = addressKey(address);
    let windowEnd = 0;
    if (this.failures) {
      try {
        windowEnd = await take(this.failures, client);
      } catch (err) {
        if (err instanceof HttpError) return err;
        throw err;
      }
    }
    // a point is given back when the key was found live, or the lookup could not run
    const giveBack = async () => {
      if (this.failures && Date.now() < windowEnd) await this.failures.reward(client);
    };
    const generation = this.generation;
    const row = await this.options.db
      .selectFrom('api_key')
      .select(['id', 'organization_id', 'role', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
      .where('secret_hash', '=', hash)
      .executeTakeFirst()
      .catch(async (err: unknown) => {
        // the database failing is not a wrong key: the point goes back
        await giveBack();
        throw err;
      });
    if (!row || row.revoked_at) {
      if (row) {
        this.options.log.info('api-key/revoked-key-used', 'A revoked API key was presented', {
          'api-key-id': row.id,
          prefix: row.prefix,
          'organization-id': row.organization_id,
        });
      }
      this.refuse(hash);
      return unauthorized(INVALID_KEY);
    }
    await giveBack();
    const entry: CachedKey = {
      caller: { id: row.id, organizationId: row.organization_id, role: row.role, prefix: row.prefix, createdAt: row.created_at },
      lastUsedMs: row.last_used_at?.getTime() ?? 0,
    };
    if (generation === this.generation) this.remember(hash, entry);
    this.touch(entry);
    return entry.caller;
  }

  private remember(hash: string, entry: CachedKey): void {
    if (this.valid.size >= CACHE_MAX) {
      const [oldestHash, oldest] = this.valid.entries().next().value as [string, CachedKey];
      this.valid.delete(oldestHash);
      this.hashById.delete(oldest.caller.id);
    }
    this.valid.set(hash, entry);
    this.hashById.set(entry.caller.id, hash);
  }

  private refuse(hash: string): void {
    if (this.refused.size >= REFUSED_MAX) this.refused.delete(this.refused.values().next().value as string);
    this.refused.add(hash);
  }

  /** Writes `last_used_at` when this instance has not for a minute; not awaited by the request. */
  private touch(entry: CachedKey): void {
    const now = Date.now();
    if (now - entry.lastUsedMs < LAST_USED_EVERY_MS || this.stopped) return;
    entry.lastUsedMs = now;
    const write: Promise<void> = this.options.db
      .updateTable('api_key')
      .set({ last_used_at: sql`now()` })
      .where('id', '=', entry.caller.id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - make_interval(secs => ${LAST_USED_EVERY_MS / 1000})`)]))
      .execute()
      .then(
        () => undefined,
        (err: Error) => {
          this.options.log.warn('api-key/last-used-failed', `Recording an API key's last use failed: ${err.message}`, { 'api-key-id': entry.caller.id });
        },
      )
      .finally(() => {
        this.writes.delete(write);
      });
    this.writes.add(write);
  }
}
