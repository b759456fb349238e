/**
 * Remembers `spell(key)` for up to `max` keys: the codecs spell the same few map keys over and
 * over. The result depends on the key alone, so sharing it between requests changes no output;
 * the bound keeps hostile input from growing it.
 */
export function boundedMemo(spell: (key: string) => string, max = 10_000): (key: string) => string {
  const spelled = new Map<string, string>();
  return (key) => {
    let value = spelled.get(key);
    if (value === undefined) {
      value = spell(key);
      if (spelled.size < max) spelled.set(key, value);
    }
    return value;
  };
}
