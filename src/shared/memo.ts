/**
 * Caches that live as long as the process and see request input (map keys, `Accept` values)
 * keep only short keys: a longer one is computed every time and never kept, so no request can
 * leave more than {@link MAX_MEMO_KEY_LENGTH} characters per entry behind
 * (docs/security.md, "Rules from the security review").
 */

/** The longest key a process-lifetime cache keeps; real map keys are far shorter. */
export const MAX_MEMO_KEY_LENGTH = 128;

/**
 * A copy of `s` that does not point into a larger string. V8 makes a slice of 13 or more
 * characters a view of its parent, so caching `body.slice(i, j)` would keep the whole body.
 */
export function ownCopy(s: string): string {
  return s.length < 13 ? s : s.split('').join('');
}

/**
 * Remembers `spell(key)` for up to `max` keys of at most {@link MAX_MEMO_KEY_LENGTH}
 * characters: the codecs spell the same few map keys over and over. The result depends on the
 * key alone, so sharing it between requests changes no output; the bounds keep hostile input
 * from growing it.
 */
export function boundedMemo<T>(spell: (key: string) => T, max = 10_000): (key: string) => T {
  const spelled = new Map<string, T>();
  return (key) => {
    if (key.length > MAX_MEMO_KEY_LENGTH) return spell(key);
    let value = spelled.get(key);
    if (value === undefined) {
      if (spelled.size >= max) return spell(key);
      // kept values are built from the copy too: `:${key} ` would point at the key
      const own = ownCopy(key);
      value = spell(own);
      spelled.set(own, value);
    }
    return value;
  };
}
