/**
 * The notifications' state and events (docs/client.md, "Notifications"): the bell's latest and
 * unread count for the signed-in account, kept live by the stream (stream.ts, whose effects these
 * events drive: when it ends or fails they decide when and how it comes back), the Notifications
 * page with its paging and unread filter, and marking read and deleting, which both show at once.
 */
import type { EventCore, EventVector } from '../core.js';
import type { AppState, Route } from '../shell/state.js';
import { t } from '../i18n/words.js';

export interface Notification {
  id: string;
  kind: string;
  category: string;
  title: string;
  body: string;
  /** where it leads in the app (a path), or null */
  url: string | null;
  'organization-id': string | null;
  'created-at': string;
  'read-at': string | null;
  /** its place in the account's notifications: the stream's event id */
  cursor: string;
}

export interface NotificationList {
  notifications: Notification[];
  'next-cursor': string | null;
  'unread-count': number;
}

/** How the live stream ended: the server's `end` reason (or `dropped`: closed without one; `network`: no answer), or the status it was refused with. */
export interface StreamClosed {
  reason?: string;
  status?: number;
  /** a 429's Retry-After, seconds */
  retryAfterS?: number;
}

export interface BellState {
  /** the account the bell is for (a log-in as someone else starts afresh) */
  for: string;
  /** the newest notifications, undefined until the first answer */
  latest?: Notification[];
  /** the first answer failed */
  failed?: boolean;
  unread?: number;
  /** the newest cursor known: the stream's Last-Event-ID when it comes back */
  cursor?: string;
  /** what the live region says (the newest arrival); `n` counts them, so the same words are said again */
  announcement?: { text: string; n: number };
  stream: {
    /** idle: before the first list answered; waiting: for a retry or a token refresh */
    status: 'idle' | 'connecting' | 'open' | 'waiting' | 'stopped';
    /** failures since the last stream that opened: the backoff's exponent */
    attempts: number;
    /** the token was refreshed for this connection: a 401 now waits instead of refreshing again */
    refreshed: boolean;
  };
}

export interface NotificationsPageState {
  unreadOnly: boolean;
  /** undefined while the first page loads */
  items?: Notification[];
  nextCursor: string | null;
  loadingMore: boolean;
}

export interface NotificationsState {
  bell?: BellState;
  notificationsPage?: NotificationsPageState;
}

declare module '../shell/state.js' {
  interface AppState extends NotificationsState {}
}

/** How many the bell's panel shows. */
export const BELL_SIZE = 10;
export const PAGE_SIZE = 20;
export const MAX_RETRY_MS = 30_000;

/** The larger of two cursors (decimal strings up to 19 digits), either possibly absent. */
export function newestCursor(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BigInt(a) >= BigInt(b) ? a : b;
}

/** An in-app path for a notification's `url`; anything else (none, another site, a scheme) is not followed. */
export function appPathOf(url: string | null): string | undefined {
  return url?.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\') ? url : undefined;
}

/**
 * How long to wait before the stream comes back (before the jitter the retry effect adds): a 429's
 * Retry-After (30 s without one), a second after a draining instance ended it (another instance
 * takes it), else doubling from 1 s per failure up to 30 s.
 */
export function reconnectDelayMs(closed: StreamClosed, attempts: number): number {
  if (closed.status === 429) return (closed.retryAfterS ?? 30) * 1000;
  if (closed.reason === 'shutting-down') return 1000;
  return Math.min(MAX_RETRY_MS, 1000 * 2 ** attempts);
}

const withBell = (state: AppState, bell: BellState): AppState => ({ ...state, bell });
const withStream = (state: AppState, bell: BellState, stream: Partial<BellState['stream']>): AppState =>
  withBell(state, { ...bell, stream: { ...bell.stream, ...stream } });

/** `ids` read in both lists (the bell's and the page's). */
function readIn(state: AppState, ids: ReadonlySet<string> | 'all', at: string): AppState {
  const mark = (list: Notification[] | undefined) =>
    list?.map((n) => (n['read-at'] === null && (ids === 'all' || ids.has(n.id)) ? { ...n, 'read-at': at } : n));
  const unreadBefore = new Set(
    [...(state.bell?.latest ?? []), ...(state.notificationsPage?.items ?? [])].filter((n) => n['read-at'] === null).map((n) => n.id),
  );
  const known = ids === 'all' ? unreadBefore.size : [...ids].filter((id) => unreadBefore.has(id)).length;
  const bell = state.bell && {
    ...state.bell,
    latest: mark(state.bell.latest),
    unread: ids === 'all' ? 0 : state.bell.unread === undefined ? undefined : Math.max(0, state.bell.unread - known),
  };
  const page = state.notificationsPage && { ...state.notificationsPage, items: mark(state.notificationsPage.items) };
  return { ...state, bell, notificationsPage: page };
}

export function registerNotifications(core: EventCore<AppState>): void {
  core
    // every page entry: a signed-in account's bell starts once (its list, then the stream), and again
    // after it stopped (a refused refresh forgot the token, not the bell: the next log-in restarts it)
    .regEvent('notifications/page-enter', ({ state }) => {
      const account = state.account;
      if (!state.token || !account || (state.bell?.for === account.id && state.bell.stream.status !== 'stopped')) return;
      return { dispatch: ['notifications/start', account.id] };
    })
    .regEvent('notifications/start', ({ state }, [, accountId]) => ({
      db: withBell(state, { for: accountId as string, stream: { status: 'idle', attempts: 0, refreshed: false } }),
      'notifications/stream-close': true,
      dispatch: ['notifications/load-latest'],
    }))
    .regEvent('notifications/load-latest', ({ state }) => {
      const bell = state.bell;
      if (!bell) return;
      return {
        'http/auth-api': {
          url: 'notifications',
          queryParams: { limit: BELL_SIZE },
          onSuccess: ['notifications/latest-loaded', bell.for],
          onFailure: ['notifications/latest-failed', bell.for],
        },
      };
    })
    .regEvent('notifications/latest-loaded', ({ state }, [, accountId, body]) => {
      const bell = state.bell;
      if (!bell || bell.for !== accountId) return;
      const list = body as NotificationList;
      // an empty list: whatever comes after cursor 0 is new (the stream sends what was written since this answer)
      const cursor = newestCursor(bell.cursor, list.notifications[0]?.cursor ?? '0');
      const next: BellState = { ...bell, latest: list.notifications, unread: list['unread-count'], cursor, failed: false };
      if (bell.stream.status !== 'idle') return { db: withBell(state, next) };
      return { db: withStream(state, next, { status: 'connecting' }), 'notifications/stream-open': { lastEventId: cursor } };
    })
    .regEvent('notifications/latest-failed', ({ state }, [, accountId]) => {
      const bell = state.bell;
      if (!bell || bell.for !== accountId) return;
      const next: BellState = { ...bell, failed: bell.latest === undefined };
      if (bell.stream.status !== 'idle') return { db: withBell(state, next) };
      // live anyway: the stream starts after the newest notification there is
      return { db: withStream(state, next, { status: 'connecting' }), 'notifications/stream-open': {} };
    })

    // the stream (stream.ts)
    .regEvent('notifications/stream-opened', ({ state }) => {
      const bell = state.bell;
      if (!bell) return;
      return { db: withStream(state, bell, { status: 'open', attempts: 0, refreshed: false }) };
    })
    .regEvent('notifications/arrived', ({ state }, [, notification]) => {
      const bell = state.bell;
      if (!bell) return;
      const n = notification as Notification;
      const cursor = newestCursor(bell.cursor, n.cursor);
      // a reconnect may send one the list already had
      if (bell.latest?.some((m) => m.id === n.id)) return { db: withBell(state, { ...bell, cursor }) };
      const page = state.notificationsPage;
      const onPage = page?.items && !page.items.some((m) => m.id === n.id) ? { ...page, items: [n, ...page.items] } : page;
      return {
        db: {
          ...state,
          notificationsPage: onPage,
          bell: {
            ...bell,
            cursor,
            latest: [n, ...(bell.latest ?? [])].slice(0, BELL_SIZE),
            // the stream's unread-count follows and is the truth; counted here so the badge never lags it
            unread: n['read-at'] === null ? (bell.unread ?? 0) + 1 : bell.unread,
            announcement: { text: t('New notification: {title}', { title: n.title }), n: (bell.announcement?.n ?? 0) + 1 },
          },
        },
      };
    })
    .regEvent('notifications/unread-count', ({ state }, [, count]) => {
      const bell = state.bell;
      if (!bell) return;
      return { db: withBell(state, { ...bell, unread: count as number }) };
    })
    // ended by the server or failed: a refresh first when the token is why, else a wait that grows
    .regEvent('notifications/stream-closed', ({ state }, [, how]) => {
      const bell = state.bell;
      if (!bell) return;
      if (!state.token) return { db: withStream(state, bell, { status: 'stopped' }) };
      const closed = how as StreamClosed;
      const tokenWhy = closed.status === 401 || closed.reason === 'token-expired' || closed.reason === 'session-ended';
      if (tokenWhy && !bell.stream.refreshed)
        return {
          db: withStream(state, bell, { status: 'waiting', refreshed: true }),
          'http/refresh-token': { onSuccess: ['notifications/reconnect'], onFailure: ['notifications/stopped'] },
        };
      return {
        // refreshed: false, so a 401 after the wait may refresh again (never twice in a row without one)
        db: withStream(state, bell, { status: 'waiting', attempts: bell.stream.attempts + 1, refreshed: false }),
        'notifications/stream-retry': { ms: reconnectDelayMs(closed, bell.stream.attempts) },
      };
    })
    .regEvent('notifications/reconnect', ({ state }) => {
      const bell = state.bell;
      if (!bell || !state.token || bell.stream.status === 'stopped') return;
      return { db: withStream(state, bell, { status: 'connecting' }), 'notifications/stream-open': { lastEventId: bell.cursor } };
    })
    // the refresh failed: the session is over (the request layer forgot the token; the shell sends the page to log in)
    .regEvent('notifications/stopped', ({ state }) => (state.bell ? { db: withStream(state, state.bell, { status: 'stopped' }) } : undefined))

    // reading and deleting, from the bell or the page
    .regEvent('notifications/mark-read', (_ctx, [, ids]) => ({
      'http/auth-api': {
        url: 'notifications/read',
        method: 'post',
        body: { ids },
        onSuccess: ['notifications/marked-read', ids],
        onFailure: ['request/failed'],
      },
    }))
    .regEvent('notifications/marked-read', ({ state }, [, ids]) => ({
      db: readIn(state, new Set(ids as string[]), new Date().toISOString()),
      dispatch: ['notifications/load-latest'],
    }))
    .regEvent('notifications/mark-all-read', () => ({
      'http/auth-api': { url: 'notifications/read', method: 'post', body: { all: true }, onSuccess: ['notifications/all-read'], onFailure: ['request/failed'] },
    }))
    .regEvent('notifications/all-read', ({ state }) => ({
      db: readIn(state, 'all', new Date().toISOString()),
      dispatchN: [['notifications/load-latest'], ['toast/info', { message: t('All notifications are marked read') }]],
    }))
    .regEvent('notifications/delete', (_ctx, [, id]) => ({
      'http/auth-api': {
        url: `notifications/${id}`,
        method: 'delete',
        onSuccess: ['notifications/deleted', id],
        onFailure: ['notifications/delete-failed', id],
      },
    }))
    .regEvent('notifications/deleted', ({ state }, [, id]) => {
      const without = (list: Notification[] | undefined) => list?.filter((n) => n.id !== id);
      const page = state.notificationsPage;
      return {
        db: {
          ...state,
          bell: state.bell && { ...state.bell, latest: without(state.bell.latest) },
          notificationsPage: page && { ...page, items: without(page.items) },
        },
        // the bell's count and its next-newest come from the server
        dispatch: ['notifications/load-latest'],
      };
    })
    // deleted already (another tab): gone all the same
    .regEvent('notifications/delete-failed', (_ctx, [, id, failure]) => ({
      dispatch: (failure as { type?: string }).type === 'not-found' ? ['notifications/deleted', id] : ['request/failed', failure],
    }))

    // the Notifications page: the first page of the filter, then "Load more" by cursor
    .regEvent('notifications/page-open', ({ state }, [, unreadOnly]) => {
      const only = Boolean(unreadOnly);
      return {
        db: { ...state, notificationsPage: { unreadOnly: only, nextCursor: null, loadingMore: false } },
        dispatch: ['notifications/page-load', only, null],
      };
    })
    .regEvent('notifications/page-load', (_ctx, [, unreadOnly, cursor]) => ({
      'http/auth-api': {
        url: 'notifications',
        queryParams: { limit: PAGE_SIZE, unread: unreadOnly ? true : undefined, cursor: (cursor as string | null) ?? undefined },
        onSuccess: ['notifications/page-loaded', unreadOnly, cursor],
        onFailureN: [['request/failed'], ['notifications/page-failed', unreadOnly, cursor]],
      },
    }))
    .regEvent('notifications/page-loaded', ({ state }, [, unreadOnly, cursor, body]) => {
      const page = state.notificationsPage;
      // an answer for the other filter (changed since) is dropped
      if (!page || page.unreadOnly !== unreadOnly) return;
      const list = body as NotificationList;
      const known = new Set((cursor ? page.items : [])?.map((n) => n.id));
      const items = cursor ? [...(page.items ?? []), ...list.notifications.filter((n) => !known.has(n.id))] : list.notifications;
      return {
        db: {
          ...state,
          notificationsPage: { ...page, items, nextCursor: list['next-cursor'], loadingMore: false },
          bell: state.bell && { ...state.bell, unread: list['unread-count'] },
        },
      };
    })
    .regEvent('notifications/page-failed', ({ state }, [, unreadOnly]) => {
      const page = state.notificationsPage;
      if (!page || page.unreadOnly !== unreadOnly) return;
      return { db: { ...state, notificationsPage: { ...page, items: page.items ?? [], loadingMore: false } } };
    })
    .regEvent('notifications/page-more', ({ state }) => {
      const page = state.notificationsPage;
      if (!page?.nextCursor || page.loadingMore) return;
      return {
        db: { ...state, notificationsPage: { ...page, loadingMore: true } },
        dispatch: ['notifications/page-load', page.unreadOnly, page.nextCursor],
      };
    })
    // a notification opened (the bell's link, the page's): read, and its page in the app
    .regEvent('notifications/open', ({ state }, [, id, route, path]) => {
      const n = [...(state.bell?.latest ?? []), ...(state.notificationsPage?.items ?? [])].find((m) => m.id === id);
      const events: EventVector[] = [];
      if (n && n['read-at'] === null) events.push(['notifications/mark-read', [id]]);
      if (route) events.push(['router/navigate', { route: route as Route, path }]);
      return { dispatchN: events };
    });
}
