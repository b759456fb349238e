/** What the bell's panel and the Notifications page share: a notification's link (opening it marks it read) and its time. */
import type { ComponentChildren } from 'preact';
import { plainClick, useApp } from '../ui/app.js';
import { dateTime } from '../ui/dates.js';
import { appPathOf, type Notification } from './events.js';
import { t } from '../i18n/words.js';

/**
 * A link to where the notification leads (its `url`, a path in the app; without one, `fallback`'s
 * path, or plain text when there is none). A plain click routes in the app; any click marks it read.
 */
export function NotificationLink({
  n,
  fallback,
  class: className,
  children,
}: {
  n: Notification;
  fallback?: string;
  class?: string;
  children: ComponentChildren;
}) {
  const { dispatch, router } = useApp();
  const path = appPathOf(n.url) ?? fallback;
  if (!path) return <span class={className}>{children}</span>;
  const route = router.routeOf(path.split(/[?#]/)[0]!);
  return (
    <a
      href={path}
      class={className}
      onClick={(e) => {
        if (!plainClick(e)) {
          // a new tab opens it: read all the same
          if (n['read-at'] === null) dispatch(['notifications/mark-read', [n.id]]);
          return;
        }
        e.preventDefault();
        dispatch(['notifications/open', n.id, route, path]);
      }}
    >
      {children}
    </a>
  );
}

/** When it happened, in the reader's locale. */
export function NotificationTime({ n }: { n: Notification }) {
  return (
    <time dateTime={n['created-at']} class="block text-xs text-muted">
      {dateTime(n['created-at'])}
    </time>
  );
}

/** Read or not, for assistive technology (the dot beside it is drawn for the eye). */
export function UnreadMark({ n }: { n: Notification }) {
  const unread = n['read-at'] === null;
  return (
    <>
      <span aria-hidden="true" class={`mt-1.5 size-2 shrink-0 rounded-full ${unread ? 'bg-primary' : 'bg-transparent'}`} />
      {unread && <span class="sr-only">{t('Unread:')} </span>}
    </>
  );
}
