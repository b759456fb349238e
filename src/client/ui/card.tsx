/** Cards: a titled section of a page; the title is the section's heading (h2) and names it. */
import type { ComponentChildren } from 'preact';

export function Card({
  title,
  titleId,
  id,
  description,
  actions,
  children,
  tone = 'plain',
  role,
  'data-enabled': dataEnabled,
}: {
  title?: ComponentChildren;
  titleId?: string;
  id?: string;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  children?: ComponentChildren;
  tone?: 'plain' | 'danger' | 'highlight';
  role?: 'alert' | 'region';
  'data-enabled'?: string;
}) {
  const headingId = titleId ?? (id ? `${id}-title` : undefined);
  const border = tone === 'danger' ? 'border-danger' : tone === 'highlight' ? 'border-primary' : 'border-line';
  return (
    <section
      id={id}
      role={role}
      data-enabled={dataEnabled}
      aria-labelledby={title ? headingId : undefined}
      class={`min-w-0 rounded-xl border ${border} bg-surface p-4 shadow-sm sm:p-6`}
    >
      {(title || actions) && (
        <div class="mb-4 flex flex-wrap items-start justify-between gap-3">
          <div class="min-w-0">
            {title && (
              <h2 id={headingId} class="text-base font-semibold">
                {title}
              </h2>
            )}
            {description && <p class="mt-1 text-sm text-muted">{description}</p>}
          </div>
          {actions && <div class="flex flex-wrap gap-2">{actions}</div>}
        </div>
      )}
      <div class="space-y-4 text-sm">{children}</div>
    </section>
  );
}

/** Cards one under the other, or side by side from `md` with `columns`. */
export function Stack({ children, columns }: { children: ComponentChildren; columns?: 2 | 3 }) {
  const grid = columns === 3 ? 'md:grid-cols-3' : columns === 2 ? 'md:grid-cols-2' : '';
  return <div class={`grid gap-4 sm:gap-6 ${grid}`}>{children}</div>;
}

/** Label–value pairs (`<dl>`). */
export function DataList({
  id,
  items,
  'data-status': status,
}: {
  id?: string;
  items: Array<[label: ComponentChildren, value: ComponentChildren, field?: string] | false | undefined>;
  'data-status'?: string;
}) {
  return (
    <dl id={id} data-status={status} class="grid grid-cols-1 gap-x-6 gap-y-2 sm:grid-cols-[max-content_1fr]">
      {items
        .filter((i): i is [ComponentChildren, ComponentChildren, string?] => Boolean(i))
        .map(([label, value, field], n) => (
          <div key={n} class="contents">
            <dt class="text-muted">{label}</dt>
            <dd class="min-w-0 break-words font-medium" data-field={field}>
              {value}
            </dd>
          </div>
        ))}
    </dl>
  );
}

/** Text of lesser importance; `as="p"` for a paragraph. */
export function Muted({ children, id }: { children: ComponentChildren; id?: string }) {
  return (
    <p id={id} class="text-sm text-muted">
      {children}
    </p>
  );
}

/** A narrow column in the middle of the page: the log-in, sign-up and link pages. */
export function Narrow({ children }: { children: ComponentChildren }) {
  return <div class="mx-auto w-full max-w-md space-y-6">{children}</div>;
}

/** A row of actions or links. */
export function Actions({ children }: { children: ComponentChildren }) {
  return <div class="flex flex-wrap items-center gap-2">{children}</div>;
}
