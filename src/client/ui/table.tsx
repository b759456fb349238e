/**
 * Tables with their loading and empty states: `rows` undefined is loading, an empty list says
 * `empty`. On a narrow screen the table scrolls inside its own box, never the page.
 */
import type { ComponentChildren } from 'preact';
import { t } from '../i18n/words.js';

export function Table<T>({
  id,
  caption,
  headers,
  rows,
  render,
  empty,
  emptyId,
  loadingText,
}: {
  id: string;
  /** names the table for assistive technology (visually hidden) */
  caption: string;
  /** column headers; an empty string is a column of actions, named for screen readers only */
  headers: string[];
  rows: T[] | undefined;
  render: (row: T) => ComponentChildren;
  empty: string;
  emptyId?: string;
  loadingText?: string;
}) {
  if (!rows)
    return (
      <p class="text-sm text-muted" role="status" aria-live="polite">
        {loadingText ?? t('Loading…')}
      </p>
    );
  if (rows.length === 0)
    return (
      <p id={emptyId} class="rounded-lg border border-dashed border-line p-4 text-center text-sm text-muted">
        {empty}
      </p>
    );
  return (
    // a table wider than a narrow screen scrolls in its box, which the keyboard can reach and scroll too (axe: scrollable-region-focusable)
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the scrolling box must take focus for keyboard scrolling
    <section class="relative -mx-4 overflow-x-auto sm:mx-0" tabIndex={0} aria-label={caption}>
      <table id={id} class="w-full min-w-[32rem] border-collapse text-start text-sm">
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr class="border-b border-line text-muted">
            {headers.map((h, i) => (
              <th key={i} scope="col" class="px-4 py-2 font-medium sm:px-3">
                {h || <span class="sr-only">{t('Actions')}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody class="[&>tr]:border-b [&>tr]:border-line [&_td]:px-4 [&_td]:py-3 [&_td]:align-top sm:[&_td]:px-3">{rows.map(render)}</tbody>
      </table>
    </section>
  );
}
