/**
 * Redaction of sensitive values by key name, at any depth. Keys are compared
 * case-insensitively and without separators or namespace (`Access_Token`, `accessToken`,
 * `:user/password` all match), so a client's spelling cannot smuggle a secret into a log.
 */

export const REDACTED = '[REDACTED]';

/** The spec's default keys (Logging rules, item 7). */
export const DEFAULT_REDACT_KEYS: readonly string[] = [
  'authorization', 'password', 'token', 'secret', 'secret-key', 'secret-token', 'refresh-token',
  'confirm-password', 'access-token', 'id-token', 'csrf-token',
];

/** Headers that carry credentials or signatures. */
export const DEFAULT_REDACT_HEADERS: readonly string[] = ['authorization', 'cookie', 'set-cookie', 'x-csrf-token', 'stripe-signature'];

const MAX_DEPTH = 20;
const MAX_ITEMS = 200;

export function normalizeKey(key: string): string {
  const name = key.startsWith(':') ? key.slice(1) : key;
  const slash = name.lastIndexOf('/');
  return (slash >= 0 ? name.slice(slash + 1) : name).toLowerCase().replace(/[-_]/g, '');
}

export type Redactor = (value: unknown) => unknown;

/** Builds a redactor for the default keys plus `extraKeys`. The input is never modified. */
export function createRedactor(extraKeys: readonly string[] = []): Redactor {
  const keys = new Set([...DEFAULT_REDACT_KEYS, ...DEFAULT_REDACT_HEADERS, ...extraKeys].map(normalizeKey));
  const memo = new Map<string, boolean>();
  const sensitive = (key: string): boolean => {
    let hit = memo.get(key);
    if (hit === undefined) {
      hit = keys.has(normalizeKey(key));
      if (memo.size < 10_000) memo.set(key, hit);
    }
    return hit;
  };
  const walk = (value: unknown, depth: number, seen: WeakSet<object>): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (seen.has(value)) return '[CIRCULAR]';
    if (depth >= MAX_DEPTH) return '[TRUNCATED]';
    seen.add(value);
    try {
      if (Array.isArray(value)) {
        const out = value.slice(0, MAX_ITEMS).map((v) => walk(v, depth + 1, seen));
        if (value.length > MAX_ITEMS) out.push(`[${value.length - MAX_ITEMS} more]`);
        return out;
      }
      if (value instanceof Date) return value.toISOString();
      if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
      const out: Record<string, unknown> = {};
      let n = 0;
      for (const key of Object.keys(value)) {
        if (n++ >= MAX_ITEMS) { out['…'] = '[TRUNCATED]'; break; }
        const v = (value as Record<string, unknown>)[key];
        Object.defineProperty(out, key, {
          value: sensitive(key) && v !== undefined && v !== null ? REDACTED : walk(v, depth + 1, seen),
          enumerable: true, writable: true, configurable: true,
        });
      }
      return out;
    } finally {
      seen.delete(value);
    }
  };
  // most log data is a flat map of harmless keys and primitives: pass it through uncopied
  const needsWalk = (value: unknown): boolean => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return true;
    for (const key in value) {
      const v = (value as Record<string, unknown>)[key];
      if ((v !== null && typeof v === 'object') || sensitive(key)) return true;
    }
    return false;
  };
  return (value) => (needsWalk(value) ? walk(value, 0, new WeakSet()) : value);
}
