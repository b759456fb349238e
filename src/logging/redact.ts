/**
 * Redaction of sensitive values by key name, at any depth. A key is sensitive when its
 * normalised form (Unicode NFKC, lower-cased, every character but a-z and 0-9 removed, so a
 * `:user/password` keyword, `user[password]` form key, `pass word`, `Access_Token` all count)
 * contains one of the patterns: a client's spelling cannot smuggle a secret into a log.
 */
import { mayHoldSecret, REDACTED, redactText } from './redact-links.js';

export { REDACTED };

/**
 * Substrings that make a key sensitive (in normalised form). Each is also a key name the tests
 * plant secrets under. `code`: an OAuth authorization code (the `code` of a sign-in callback's
 * query) and a PKCE `code_verifier` are credentials; so the project's own harmless codes are
 * logged under other names (`sqlstate`, `exit-status`).
 */
export const DEFAULT_REDACT_KEYS: readonly string[] = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'authorization',
  'cookie',
  'apikey',
  'privatekey',
  'signature',
  'csrf',
  // two-factor: backup codes, otpauth:// URIs (they carry the TOTP secret), anything named totp
  'backupcode',
  'otpauth',
  'totp',
  // a SAML response is a signed assertion: a bearer credential until its single use (src/sso/)
  'samlresponse',
  // OAuth (src/oauth/): a PKCE verifier redeems a code; client secrets, access, refresh and ID
  // tokens are covered by `secret` and `token`, authorization codes by the exact `code`
  'codeverifier',
];

/**
 * Keys sensitive only as a whole (normalised): words too common inside harmless keys to match
 * as substrings (`status-code`, `country-code`), but secrets on their own (a TOTP code, an
 * OAuth authorization code).
 */
export const DEFAULT_REDACT_EXACT_KEYS: readonly string[] = ['code', 'otp'];

const MAX_DEPTH = 20;
const MAX_ITEMS = 200;
// the memo keeps only short keys (real ones are): a long one is normalised every time, so
// request input cannot pile up in it
const MAX_MEMO_KEY_LENGTH = 128;
const MAX_MEMO_KEYS = 10_000;

export function normalizeKey(key: string): string {
  return key
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

export type Redactor = (value: unknown) => unknown;

/**
 * Builds a redactor for the default patterns plus `extraKeys` (`LOG_REDACT_KEYS`), which match
 * the same way: as substrings of the normalised key. The input is never modified.
 */
export function createRedactor(extraKeys: readonly string[] = []): Redactor {
  // an extra that normalises to nothing ("--") would match every key
  const patterns = [...new Set([...DEFAULT_REDACT_KEYS, ...extraKeys].map(normalizeKey))].filter((p) => p !== '');
  const exact = new Set(DEFAULT_REDACT_EXACT_KEYS);
  const matches = (key: string): boolean => {
    const normal = normalizeKey(key);
    if (exact.has(normal)) return true;
    for (const pattern of patterns) if (normal.includes(pattern)) return true;
    return false;
  };
  const memo = new Map<string, boolean>();
  const sensitive = (key: string): boolean => {
    if (key.length > MAX_MEMO_KEY_LENGTH) return matches(key);
    let hit = memo.get(key);
    if (hit === undefined) {
      hit = matches(key);
      // a copy: a key sliced from a body would keep the whole body alive
      if (memo.size < MAX_MEMO_KEYS) memo.set(key.length < 13 ? key : key.split('').join(''), hit);
    }
    return hit;
  };
  // under a sensitive key, a map keeps its own keys (cookie names, say) and every value is replaced
  const blank = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) return REDACTED;
    const out: Record<string, unknown> = {};
    let n = 0;
    for (const key of Object.keys(value)) {
      if (n++ >= MAX_ITEMS) {
        out['…'] = '[TRUNCATED]';
        break;
      }
      Object.defineProperty(out, key, { value: REDACTED, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const walk = (value: unknown, depth: number, seen: WeakSet<object>): unknown => {
    // a whole link in one string value (a message, an error, a Referer) hides its token from
    // key-name redaction, and an API key can be anywhere in a text
    if (typeof value === 'string') return redactText(value);
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
        if (n++ >= MAX_ITEMS) {
          out['…'] = '[TRUNCATED]';
          break;
        }
        const v = (value as Record<string, unknown>)[key];
        Object.defineProperty(out, key, {
          value: sensitive(key) && v !== undefined && v !== null ? blank(v) : walk(v, depth + 1, seen),
          enumerable: true,
          writable: true,
          configurable: true,
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
      if ((v !== null && typeof v === 'object') || sensitive(key) || (typeof v === 'string' && mayHoldSecret(v))) return true;
    }
    return false;
  };
  return (value) => (needsWalk(value) ? walk(value, 0, new WeakSet()) : value);
}
