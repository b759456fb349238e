/**
 * The Notifications page (`/notifications`): the account's notifications newest first, all or the
 * unread ones, 20 at a time with "Load more"; each marked read or deleted on its own, or all read
 * at once. New ones arrive at the top while it is open (the stream).
 */
import { useEffect } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Card } from '../ui/card.js';
import { PageHeader } from '../ui/page-header.js';
import type { Notification } from './events.js';
import { NotificationLink, NotificationTime, UnreadMark } from './item.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** All or only the unread ones: a group of two pressed buttons (as the pricing page's interval). */
function Filter({ unreadOnly }: { unreadOnly: boolean }) {
  const { dispatch } = useApp();
  const choices: Array<[boolean, string, string]> = [
    [false, 'all', t('All')],
    [true, 'unread', t('Unread')],
  ];
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of toggle buttons; a fieldset would bring a legend and its own box
    <div role="group" aria-label={t('Show')} id="notifications-filter" class="inline-flex rounded-lg border border-line bg-surface p-1">
      {choices.map(([only, id, label]) => (
        <button
          key={id}
          type="button"
          aria-pressed={unreadOnly === only}
          data-filter={id}
          onClick={() => unreadOnly !== only && dispatch(['notifications/page-open', only])}
          class={`rounded-md px-4 py-1.5 text-sm font-medium ${unreadOnly === only ? 'bg-primary text-primary-fg' : 'text-fg hover:bg-raised'}`}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

function Item({ n }: { n: Notification }) {
  const { dispatch } = useApp();
  const unread = n['read-at'] === null;
  return (
    <li data-notification={n.id} data-read={unread ? 'false' : 'true'} data-kind={n.kind} class="flex flex-col gap-2 py-3 sm:flex-row sm:items-start sm:gap-3">
      <div class="flex min-w-0 flex-1 items-start gap-2">
        <UnreadMark n={n} />
        <div class="min-w-0 flex-1 space-y-1">
          <NotificationLink n={n} class={`block break-words ${unread ? 'font-semibold' : ''}`}>
            <bdi>{n.title}</bdi>
          </NotificationLink>
          <p dir="auto" class="break-words text-muted">
            {n.body}
          </p>
          <NotificationTime n={n} />
        </div>
      </div>
      <div class="flex shrink-0 gap-2 ps-4 sm:ps-0">
        {unread && (
          <Button
            variant="secondary"
            class="mark-read"
            aria-label={t('Mark read: {title}', { title: n.title })}
            onClick={() => dispatch(['notifications/mark-read', [n.id]])}
          >
            {t('Mark read')}
          </Button>
        )}
        <Button
          variant="secondary"
          class="delete-notification"
          aria-label={t('Delete: {title}', { title: n.title })}
          onClick={() => dispatch(['notifications/delete', n.id])}
        >
          {t('Delete')}
        </Button>
      </div>
    </li>
  );
}

export function NotificationsPage() {
  const { state, dispatch } = useApp();
  // each visit starts from the newest
  useEffect(() => {
    dispatch(['notifications/page-open', false]);
  }, []);
  const page = state.notificationsPage;
  const unread = state.bell?.unread ?? 0;
  const items = page?.items;
  return (
    <>
      <PageHeader
        title={t('Notifications')}
        description={rich('What happened in your account and your organizations. Choose what reaches you, and how, in <0>notification preferences</0>.', [
          (text) => (
            <Link to="notification-preferences" id="notifications-preferences-link">
              {text}
            </Link>
          ),
        ])}
        actions={
          <Button id="mark-all-read" variant="secondary" aria-disabled={unread === 0} onClick={() => unread > 0 && dispatch(['notifications/mark-all-read'])}>
            {t('Mark all read')}
          </Button>
        }
      />
      <Card>
        <Filter unreadOnly={page?.unreadOnly ?? false} />
        {!items ? (
          <p class="text-sm text-muted" role="status">
            {t('Loading notifications…')}
          </p>
        ) : items.length === 0 ? (
          <p id="no-notifications" class="rounded-lg border border-dashed border-line p-4 text-center text-sm text-muted">
            {page?.unreadOnly ? t('No unread notifications: you are all caught up.') : t('No notifications yet.')}
          </p>
        ) : (
          <ul id="notification-list" aria-label={page?.unreadOnly ? t('Unread notifications') : t('Notifications')} class="divide-y divide-line">
            {items.map((n) => (
              <Item key={n.id} n={n} />
            ))}
          </ul>
        )}
        {page?.nextCursor && (
          <Button id="notifications-more" variant="secondary" disabled={page.loadingMore} onClick={() => dispatch(['notifications/page-more'])}>
            {page.loadingMore ? t('Loading…') : t('Load more')}
          </Button>
        )}
      </Card>
    </>
  );
}
