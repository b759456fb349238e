/**
 * A page's header: its title (the one `h1`, which takes the focus after a navigation), a line
 * below it, and its actions.
 */
import type { ComponentChildren } from 'preact';

export function PageHeader({
  title,
  id,
  description,
  actions,
  back,
  'data-org': dataOrg,
  'data-role': dataRole,
}: {
  title: ComponentChildren;
  id?: string;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  back?: ComponentChildren;
  'data-org'?: string;
  'data-role'?: string;
}) {
  return (
    <div class="mb-6 space-y-2">
      {back && <div class="text-sm">{back}</div>}
      <div class="flex flex-wrap items-end justify-between gap-3">
        <div class="min-w-0">
          <h1
            id={id ?? 'page-title'}
            data-page-title
            tabIndex={-1}
            data-org={dataOrg}
            data-role={dataRole}
            class="break-words text-2xl font-semibold tracking-tight"
          >
            {title}
          </h1>
          {description && <p class="mt-1 text-sm text-muted">{description}</p>}
        </div>
        {actions && <div class="flex flex-wrap gap-2">{actions}</div>}
      </div>
    </div>
  );
}
