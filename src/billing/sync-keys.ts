/**
 * The Idempotency-Keys and meter-event identifiers the Stripe sync sends (docs/billing.md, "When
 * Stripe is down"). One Stripe account outlives a database: a reset, a restore or a staging copy
 * starts its job ids again at 1 while Stripe remembers keys and identifiers for 24 h or more, so
 * a key is a random UUID, fixed on the job at its first attempt and reused by every retry.
 */
import { randomUUID } from 'node:crypto';

export type SyncKind = 'seats' | 'meter';

const PREFIX: Record<SyncKind, string> = { seats: 'seats-', meter: 'usage-' };
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const OURS: Record<SyncKind, RegExp> = { seats: new RegExp(`^seats-${UUID}$`), meter: new RegExp(`^usage-${UUID}$`) };

/** A new key (seats) or identifier (meter events), unique across databases. */
export function newSyncKey(kind: SyncKind): string {
  return `${PREFIX[kind]}${randomUUID()}`;
}

/**
 * Whether `key` is one this code made: only then does Stripe's "an event with this identifier
 * exists" prove the event is ours. A key of the older form (`usage-<job id>`, written before
 * this) may name another database's event.
 */
export function isOwnSyncKey(kind: SyncKind, key: string): boolean {
  return OURS[kind].test(key);
}
