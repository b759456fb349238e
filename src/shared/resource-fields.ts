/**
 * The fields of a resource made by `npm run new:resource` (docs/resources.md), as data that the
 * server (schemas, rows) and the client (forms, tables) both read: one description of each
 * field, so the API, the database and the page agree on its type, whether it is optional and
 * what an enum takes.
 */

export type FieldType = 'string' | 'text' | 'integer' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'enum' | 'file' | 'image';

/** A file field's types: its column holds a stored file's id (docs/files.md), its purpose is `<plural>.<field>`. */
export const FILE_TYPES: readonly FieldType[] = ['file', 'image'];
export const isFileType = (type: FieldType) => FILE_TYPES.includes(type);

export interface FieldSpec {
  readonly type: FieldType;
  /** absent from a create means `null`; `null` in an update clears it */
  readonly optional?: boolean;
  /** an enum's values, lower-case kebab-case words */
  readonly values?: readonly string[];
}

/** A resource's fields by their API name (kebab-case), in the order forms and tables show them. */
export type FieldSpecs = Readonly<Record<string, FieldSpec>>;

/** A file field's value as the API answers it: the stored file, its signed link (5 minutes), an image's 64 and 256 px renditions. */
export interface FileValue {
  id: string;
  name: string;
  'content-type': string;
  size: number;
  url: string;
  renditions?: { '64': string; '256': string };
}

/**
 * The value of a field as the API answers it: decimals as strings, dates as `YYYY-MM-DD`,
 * date-times as ISO 8601 in UTC, a file as a {@link FileValue} (a request sends its id).
 */
export type FieldValue = string | number | boolean | null | FileValue;

export const STRING_MAX = 255;
export const TEXT_MAX = 65_535;
export const INTEGER_MIN = -(2 ** 31);
export const INTEGER_MAX = 2 ** 31 - 1;
/** `numeric(20, 2)`-free: any exact decimal; at most 30 digits before the point and 10 after */
export const DECIMAL_PATTERN = '^-?(0|[1-9][0-9]{0,29})(\\.[0-9]{1,10})?$';

/** `starts-at` -> `Starts at` */
export function humanize(name: string): string {
  const words = name.split('-').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** `starts-at` -> `starts_at`: the column of a field */
export const columnOf = (name: string) => name.replaceAll('-', '_');

/** Whether `text` is `YYYY-MM-DD` naming a day of the calendar (no 2025-02-30). */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Whether `text` is an ISO 8601 date-time with an offset (`Z` or `±hh:mm`) naming a real moment. */
export function isOffsetDateTime(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i.exec(text);
  return match !== null && isCalendarDate(match[1]) && !Number.isNaN(Date.parse(text));
}
