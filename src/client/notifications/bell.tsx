/**
 * The notifications bell in the header (a disclosure, as the account menu is): its accessible name
 * and badge say the unread count; a polite live region says each new one as the stream brings it;
 * the panel lists the latest with "Mark all read" and the way to the Notifications page. Escape
 * closes it and gives the focus back to the bell.
 */
import { Bell } from 'lucide';
import { Link, useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { useDisclosure } from '../ui/disclosure.js';
import { Icon } from '../ui/icon.js';
import type { BellState } from './events.js';
import { NotificationLink, NotificationTime, UnreadMark } from './item.js';
import { t } from '../i18n/words.js';

/** The bell's accessible name: "Notifications, 3 unread" (just "Notifications" until the count is known). */
export const bellLabel = (unread: number | undefined) => (unread === undefined ? t('Notifications') : t('Notifications, {unread, number} unread', { unread }));

function Latest({ bell }: { bell: BellState | undefined }) {
  const { router } = useApp();
  if (bell?.failed)
    return (
      <p id="notifications-failed" class="px-3 py-4 text-sm text-muted">
        {t('Notifications could not be loaded.')}
      </p>
    );
  if (!bell?.latest)
    return (
      <p class="px-3 py-4 text-sm text-muted" role="status">
        {t('Loading…')}
      </p>
    );
  if (bell.latest.length === 0)
    return (
      <p id="notifications-empty" class="px-3 py-4 text-sm text-muted">
        {t('No notifications yet.')}
      </p>
    );
  const all = router.pathOf('notifications');
  return (
    <ul id="notifications-latest" class="max-h-[min(24rem,60vh)] divide-y divide-line overflow-y-auto">
      {bell.latest.map((n) => (
        <li key={n.id} data-notification={n.id} data-read={n['read-at'] ? 'true' : 'false'}>
          <NotificationLink n={n} fallback={all} class="flex items-start gap-2 px-3 py-2 text-sm text-fg no-underline hover:bg-raised hover:no-underline">
            <UnreadMark n={n} />
            <span class="min-w-0 flex-1">
              {/* a notification keeps the language it was written in: its words pick their own direction */}
              <span dir="auto" class={`block break-words ${n['read-at'] ? '' : 'font-semibold'}`}>
                {n.title}
              </span>
              <span dir="auto" class="line-clamp-2 block break-words text-muted">
                {n.body}
              </span>
              <NotificationTime n={n} />
            </span>
          </NotificationLink>
        </li>
      ))}
    </ul>
  );
}

export function NotificationBell() {
  const { state, dispatch } = useApp();
  const { open, setOpen, box, onKeyDown, onPanelClick } = useDisclosure();
  const bell = state.bell;
  const unread = bell?.unread;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape anywhere in the open panel closes it (the keys reach the focused button or link first)
    <div class="relative" ref={box} onKeyDown={onKeyDown}>
      <Button
        variant="ghost"
        id="notifications-button"
        class="relative"
        aria-label={bellLabel(unread)}
        aria-expanded={open}
        aria-controls="notifications-panel"
        onClick={() => setOpen(!open)}
      >
        <Icon icon={Bell} />
        {unread ? (
          <span
            id="notifications-badge"
            aria-hidden="true"
            class="absolute end-0.5 top-0.5 min-w-5 rounded-full bg-danger px-1 text-center text-xs font-semibold leading-5 text-danger-fg"
          >
            {unread > 99 ? '99+' : unread}
          </span>
        ) : null}
      </Button>
      {/* in the page from the start, so a change in it is announced; keyed, so the same words are said again */}
      <div id="notifications-announcer" class="sr-only" aria-live="polite" aria-atomic="true">
        {bell?.announcement && <span key={bell.announcement.n}>{bell.announcement.text}</span>}
      </div>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: following a link inside closes the panel; the link itself is the keyboard's target (Enter clicks it) */}
      <section
        id="notifications-panel"
        hidden={!open}
        aria-labelledby="notifications-panel-title"
        class="fixed inset-x-2 top-14 z-40 rounded-xl border border-line bg-surface shadow-lg sm:absolute sm:inset-x-auto sm:end-0 sm:top-full sm:mt-2 sm:w-96"
        onClick={onPanelClick}
      >
        <div class="flex items-center justify-between gap-2 border-b border-line px-3 py-2">
          <h2 id="notifications-panel-title" class="text-sm font-semibold">
            {t('Notifications')}
          </h2>
          <Button variant="link" id="notifications-mark-all" aria-disabled={!unread} onClick={() => unread && dispatch(['notifications/mark-all-read'])}>
            {t('Mark all read')}
          </Button>
        </div>
        <Latest bell={bell} />
        <div class="border-t border-line px-3 py-2 text-sm">
          <Link to="notifications" id="notifications-see-all">
            {t('All notifications')}
          </Link>
        </div>
      </section>
    </div>
  );
}
