/**
 * A message's values put in as they are, whatever they contain. Lingui's runtime reads the whole
 * formatted text once more after putting the values in: it decodes `\uXXXX` and `\xXX` (a name
 * typed as the six characters `\u0000` would come out as a NUL, which PostgreSQL refuses, or
 * `\u202e` as a right-to-left override on a consent page) and replaces its `#` placeholder
 * inside plural branches. A string value that holds a backslash or a `%` is therefore handed to
 * the formatter as a private-use slot and put back into the formatted text afterwards, in one
 * pass that never reads what it puts back. Other values (an organization's role in a `select`,
 * counts) go in untouched.
 */

/** A message's values by name: texts, and numbers for plurals and `Intl`. */
export type MessageValues = Readonly<Record<string, string | number>>;

/** What the formatter would read again; the slot's own characters, so a value cannot fake one. */
const READ_AGAIN = /[\\%\uE002\uE003]/;
const SLOT = /\uE002(\d+)\uE003/g;

/** `format(values)`, with each value the formatter would read again kept out of its reach. */
export function formatWithValues(values: MessageValues, format: (values: MessageValues) => string): string {
  let kept: string[] | undefined;
  let handed: Record<string, string | number> | undefined;
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== 'string' || !READ_AGAIN.test(value)) continue;
    kept ??= [];
    handed ??= { ...values };
    handed[name] = `\uE002${kept.push(value) - 1}\uE003`;
  }
  if (!kept || !handed) return format(values);
  const texts = kept;
  return format(handed).replace(SLOT, (slot, n: string) => texts[Number(n)] ?? slot);
}
