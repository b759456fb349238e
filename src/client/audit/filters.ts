/**
 * The audit log's filters as the page's query string: the API's own names (`action`, repeated,
 * `actor-id`, `target-type`, `target-id`, `from`, `to`), the instants in ISO 8601 UTC, so a link
 * means the same selection in every time zone and the query is what the API and the export take.
 */

/** The query's filter parameters, the API's names; anything else in a query string is dropped. */
export const FILTER_KEYS = ['action', 'actor-id', 'target-type', 'target-id', 'from', 'to'];

/** A location's search (`?action=…`) reduced to its filters, in their order: `''` for none. */
export function filterQuery(search: string): string {
  return new URLSearchParams([...new URLSearchParams(search)].filter(([k, v]) => FILTER_KEYS.includes(k) && v.trim() !== '')).toString();
}

/** An ISO instant as a `datetime-local` input's value (the reader's time zone, to the minute); `''` for none or a bad one. */
export function localInput(iso: string | null): string {
  const d = new Date(iso ?? '');
  return Number.isNaN(d.getTime()) ? '' : new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * The filter form's fields as the query: every `action` (the boxes ticked and the words typed,
 * split on commas and spaces), the other fields trimmed, `from` and `to` read in the reader's
 * time zone and sent in UTC.
 */
export function queryOfForm(data: FormData): string {
  const query = new URLSearchParams();
  const actions = data.getAll('action').flatMap((v) => String(v).split(/[\s,]+/));
  for (const a of new Set(actions)) if (a) query.append('action', a);
  for (const key of FILTER_KEYS.slice(1)) {
    const value = String(data.get(key) ?? '').trim();
    const at = key === 'from' || key === 'to' ? new Date(value) : undefined;
    // a value the browser let through unparsed goes as typed: the server's 400 names the field
    if (value) query.set(key, at && !Number.isNaN(at.getTime()) ? at.toISOString() : value);
  }
  return query.toString();
}
