/** Timestamps as the reader reads them: in their locale and time zone. */

/** Date and time; `none` stands in where there is none ('never' for a last use that never came). */
export const dateTime = (iso: string | null | undefined, none = '—'): string => (iso ? new Date(iso).toLocaleString() : none);

/** The date alone; `timeZone` pins one (a billing period's days are UTC days). */
export const dateOnly = (iso: string | null | undefined, none = '—', timeZone?: string): string =>
  iso ? new Date(iso).toLocaleDateString(undefined, timeZone ? { timeZone } : undefined) : none;
