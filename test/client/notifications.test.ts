/**
 * The client's notifications without a browser (docs/client.md, "Notifications"): the
 * `text/event-stream` reader on text cut anywhere; the bell's events against a fake transport (the
 * latest and the stream opened after them with the newest cursor, arrivals, the count, marking read,
 * deleting, the page with its filter and "Load more", following a notification); the stream's
 * effects against a fake `fetch` (the token and Last-Event-ID sent, events dispatched, how it ended,
 * log-out closing it) and the reconnection policy end to end (a token-expired end refreshes the
 * token and comes back after the last cursor; refusals wait longer each time; a failed refresh
 * stops); the preferences grid (only what changed is sent, a critical category never, a 400 in
 * the server's words, an organization's defaults for its admins only).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { routeOf } from '../../src/client/app.js';
import type { TransportRequest } from '../../src/client/http.js';
import {
  appPathOf,
  newestCursor,
  type Notification,
  type NotificationList,
  reconnectDelayMs,
  registerNotifications,
} from '../../src/client/notifications/events.js';
import { notifications as feature } from '../../src/client/notifications/feature.js';
import { ACCOUNT_OWNER, type CategoryPreference, changesOf, registerNotificationPreferences } from '../../src/client/notifications/preferences-events.js';
import { type SseEvent, sseParser } from '../../src/client/notifications/sse.js';
import { registerNotificationStream, STREAM_URL } from '../../src/client/notifications/stream.js';
import { transitJson } from '../../src/shared/codecs.js';
import { ACCOUNT, answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const note = (n: number, read = false): Notification => ({
  id: `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`,
  kind: 'member-joined',
  category: 'organizations',
  title: `Member ${n} joined Acme`,
  body: `member${n}@example.test joined Acme as member.`,
  url: `/orgs/${ORG}/members`,
  'organization-id': ORG,
  'created-at': '2026-03-01T10:00:00.000Z',
  'read-at': read ? '2026-03-01T11:00:00.000Z' : null,
  cursor: String(100 + n),
});
const list = (items: Notification[], next: string | null = null, unread = items.filter((n) => !n['read-at']).length): NotificationList => ({
  notifications: items,
  'next-cursor': next,
  'unread-count': unread,
});
const bodyOf = (req: TransportRequest) => transitJson.decode(req.body!);
const queryOf = (req: TransportRequest) => Object.fromEntries(new URL(req.url, 'http://x').searchParams);

describe('the event-stream reader', () => {
  const read = (chunks: string[]) => {
    const events: SseEvent[] = [];
    const parser = sseParser((e) => events.push(e));
    for (const c of chunks) parser.push(c);
    return events;
  };
  const STREAM =
    '\uFEFF: connected\n\nid: 7\nevent: notification\ndata: {"a":1}\n\nevent: unread-count\r\ndata: {"unread-count":2}\r\n\r\n' +
    ': heartbeat\r\rdata: one\ndata: two\n\nevent: nothing\n\nevent: end\ndata:{"reason":"token-expired"}\n\n';
  const EXPECTED: SseEvent[] = [
    { event: 'notification', data: '{"a":1}', id: '7' },
    { event: 'unread-count', data: '{"unread-count":2}', id: '7' },
    { event: 'message', data: 'one\ntwo', id: '7' },
    { event: 'end', data: '{"reason":"token-expired"}', id: '7' },
  ];

  it('reads events with LF, CRLF and CR line ends, skips comments and events without data, joins data lines, keeps the last id', () => {
    assert.deepEqual(read([STREAM]), EXPECTED);
  });

  it('gives the same events whatever the chunks (a CRLF split between two, one character at a time)', () => {
    assert.deepEqual(read([...STREAM]), EXPECTED);
    for (let cut = 1; cut < STREAM.length; cut += 7) assert.deepEqual(read([STREAM.slice(0, cut), STREAM.slice(cut)]), EXPECTED, `cut at ${cut}`);
  });

  it('waits for the blank line: an unfinished event says nothing yet', () => {
    assert.deepEqual(read(['event: notification\ndata: {}\n']), []);
  });
});

describe('notification helpers', () => {
  it('compares cursors as numbers, and follows only paths in the app', () => {
    assert.equal(newestCursor('99', '100'), '100');
    assert.equal(newestCursor(undefined, '5'), '5');
    assert.equal(newestCursor('9223372036854775807', '9223372036854775806'), '9223372036854775807');
    assert.equal(appPathOf('/orgs/x/members'), '/orgs/x/members');
    for (const url of [null, 'https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)'])
      assert.equal(appPathOf(url), undefined, String(url));
  });

  it('waits 1 s, 2 s, 4 s … up to 30 s; a 429 its Retry-After; a draining server 1 s', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6].map((a) => reconnectDelayMs({ reason: 'dropped' }, a)),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000],
    );
    assert.equal(reconnectDelayMs({ status: 429, retryAfterS: 30 }, 0), 30_000);
    assert.equal(reconnectDelayMs({ status: 429 }, 3), 30_000);
    assert.equal(reconnectDelayMs({ reason: 'shutting-down' }, 4), 1000);
  });

  it('routes /notifications, /settings/notifications and /orgs/<id>/notifications; the defaults link is for admins', () => {
    assert.equal(routeOf('/notifications'), 'notifications');
    assert.equal(routeOf('/settings/notifications'), 'notification-preferences');
    assert.equal(routeOf(`/orgs/${ORG}/notifications`), 'org-notifications');
    const item = feature.nav!.find((n) => n.route === 'org-notifications')!;
    const as = (role: string) => ({ route: 'account', toasts: [], busy: false, ready: true, currentOrg: ORG, orgs: [{ id: ORG, role }] }) as never;
    assert.equal(item.path!(as('admin'), '/account'), `/orgs/${ORG}/notifications`);
    assert.equal(item.path!(as('member'), '/account'), undefined);
  });
});

/** The bell's events on a fake transport; the stream's effects recorded, not run. */
function bellClient(initial: Notification[] = [note(2), note(1, true)]) {
  let server = [...initial];
  const fx = { opened: [] as Array<{ lastEventId?: string }>, closed: 0, retries: [] as number[] };
  const client = fakeClient('account', (req) => {
    const q = queryOf(req);
    switch (callOf(req)) {
      case 'GET /api/notifications': {
        let items = q.unread === 'true' ? server.filter((n) => !n['read-at']) : server;
        if (q.cursor) items = items.filter((n) => BigInt(n.cursor) < BigInt(q.cursor!));
        const limit = Number(q.limit ?? 20);
        const page = items.slice(0, limit);
        return answer(list(page, items.length > limit ? page.at(-1)!.cursor : null, server.filter((n) => !n['read-at']).length));
      }
      case 'POST /api/notifications/read': {
        const b = bodyOf(req) as { ids?: string[]; all?: boolean };
        server = server.map((n) => (b.all || b.ids?.includes(n.id) ? { ...n, 'read-at': n['read-at'] ?? '2026-03-02T00:00:00.000Z' } : n));
        return { status: 204, contentType: '', text: '' };
      }
      case 'POST /api/account/refresh':
        return answer({ 'access-token': 'access-2', account: ACCOUNT });
      default: {
        const m = /^DELETE \/api\/notifications\/(.+)$/.exec(callOf(req));
        if (!m) return undefined;
        if (!server.some((n) => n.id === m[1])) return answer({ type: 'not-found', message: 'No such notification' }, 404);
        server = server.filter((n) => n.id !== m[1]);
        return { status: 204, contentType: '', text: '' };
      }
    }
  });
  registerNotifications(client.core);
  client.core.regFx('notifications/stream-open', (v: { lastEventId?: string }) => fx.opened.push(v));
  client.core.regFx('notifications/stream-close', () => fx.closed++);
  client.core.regFx('notifications/stream-retry', ({ ms }: { ms: number }) => fx.retries.push(ms));
  const bell = () => client.core.state.bell!;
  return { ...client, fx, bell, add: (n: Notification) => (server = [n, ...server]) };
}

describe('the bell', () => {
  it('starts once per account on entering a page: the latest ten, then the stream after the newest cursor', async () => {
    const c = bellClient();
    await c.run(['notifications/page-enter', 'account']);
    const [first] = c.requests;
    assert.equal(callOf(first!), 'GET /api/notifications');
    assert.deepEqual(queryOf(first!), { limit: '10' });
    assert.equal(first!.headers.authorization, 'Bearer access-1');
    assert.deepEqual(
      c.bell().latest!.map((n) => n.id),
      [note(2).id, note(1).id],
    );
    assert.equal(c.bell().unread, 1);
    assert.deepEqual(c.fx.opened, [{ lastEventId: '102' }]);
    assert.equal(c.bell().stream.status, 'connecting');
    await c.run(['notifications/page-enter', 'orgs']);
    assert.equal(c.requests.length, 1, 'started already');
  });

  it('starts after cursor 0 when there is none yet, and without a Last-Event-ID when the list failed', async () => {
    const empty = bellClient([]);
    await empty.run(['notifications/page-enter', 'account']);
    assert.deepEqual(empty.fx.opened, [{ lastEventId: '0' }]);
    const failing = fakeClient('account', () => answer({ type: 'unavailable', message: 'down' }, 503));
    registerNotifications(failing.core);
    const opened: unknown[] = [];
    failing.core.regFx('notifications/stream-open', (v) => opened.push(v));
    failing.core.regFx('notifications/stream-close', () => undefined);
    await failing.run(['notifications/page-enter', 'account']);
    assert.deepEqual(opened, [{}]);
    assert.equal(failing.core.state.bell!.failed, true);
  });

  it('does nothing signed out', async () => {
    const c = fakeClient('log-in', () => undefined, { session: 'none' });
    registerNotifications(c.core);
    await c.run(['notifications/page-enter', 'log-in']);
    assert.equal(c.core.state.bell, undefined);
    assert.deepEqual(c.requests, []);
  });

  it('puts an arrival on top, counts it, announces it, keeps its cursor; one it has already changes nothing else', async () => {
    const c = bellClient();
    await c.run(['notifications/page-enter', 'account']);
    await c.run(['notifications/arrived', note(3)]);
    assert.equal(c.bell().latest![0]!.id, note(3).id);
    assert.equal(c.bell().unread, 2);
    assert.equal(c.bell().cursor, '103');
    assert.deepEqual(c.bell().announcement, { text: 'New notification: Member 3 joined Acme', n: 1 });
    await c.run(['notifications/arrived', note(3)]);
    assert.equal(c.bell().latest!.length, 3);
    assert.equal(c.bell().unread, 2);
    await c.run(['notifications/unread-count', 7]);
    assert.equal(c.bell().unread, 7, "the stream's count is the truth");
    for (let n = 4; n < 20; n++) await c.run(['notifications/arrived', note(n)], 0);
    await sleep(10);
    assert.equal(c.bell().latest!.length, 10, 'the panel keeps ten');
    assert.equal(c.bell().announcement!.n, 17, 'each arrival is said');
  });

  it('marks one read (the count goes down at once, then the server says it), all read, and deletes', async () => {
    const c = bellClient([note(3), note(2), note(1, true)]);
    await c.run(['notifications/page-enter', 'account']);
    assert.equal(c.bell().unread, 2);
    await c.run(['notifications/mark-read', [note(3).id]]);
    const read = c.requests.find((r) => callOf(r) === 'POST /api/notifications/read')!;
    assert.deepEqual(bodyOf(read), { ids: [note(3).id] });
    assert.equal(read.headers['x-csrf-token'], 'csrf-1');
    assert.notEqual(c.bell().latest![0]!['read-at'], null);
    assert.equal(c.bell().unread, 1);
    assert.equal(c.requests.filter((r) => callOf(r) === 'GET /api/notifications').length, 2, 'the latest asked again');
    await c.run(['notifications/mark-all-read']);
    assert.deepEqual(bodyOf(c.requests.filter((r) => callOf(r) === 'POST /api/notifications/read').at(-1)!), { all: true });
    assert.equal(c.bell().unread, 0);
    assert.ok(c.bell().latest!.every((n) => n['read-at'] !== null));
    assert.ok(c.core.state.toasts.some((t) => t.message === 'All notifications are marked read'));
    await c.run(['notifications/delete', note(2).id]);
    assert.deepEqual(
      c.bell().latest!.map((n) => n.id),
      [note(3).id, note(1).id],
    );
    // deleted in another tab already: gone here too, no error
    c.bell().latest!.push(note(9));
    await c.run(['notifications/delete', note(9).id]);
    assert.ok(!c.bell().latest!.some((n) => n.id === note(9).id));
    assert.equal(c.core.state.toasts.filter((t) => t.kind === 'error').length, 0);
  });

  it('opening one marks it read and goes to its page; a read one is only followed', async () => {
    const c = bellClient();
    await c.run(['notifications/page-enter', 'account']);
    await c.run(['notifications/open', note(2).id, 'org-members', note(2).url]);
    assert.deepEqual(c.navigated, [note(2).url]);
    assert.equal(c.core.state.route, 'org-members');
    assert.deepEqual(bodyOf(c.requests.find((r) => callOf(r) === 'POST /api/notifications/read')!), { ids: [note(2).id] });
    await c.run(['notifications/open', note(1).id, 'org-members', note(1).url]);
    assert.equal(c.requests.filter((r) => callOf(r) === 'POST /api/notifications/read').length, 1);
  });

  it('a log-out ends the stream without a refresh: the server closes it before the log-out answers', async () => {
    const c = bellClient();
    await c.run(['notifications/page-enter', 'account']);
    c.core.dispatchSync(['log-out']);
    assert.equal(c.core.state.token, undefined, 'the access token is forgotten when the log-out starts');
    c.core.dispatchSync(['notifications/stream-closed', { reason: 'session-ended' }]);
    assert.equal(c.core.state.bell?.stream.status, 'stopped');
    await c.run(['app/idle']);
    assert.equal(c.requests.filter((r) => callOf(r) === 'POST /api/account/refresh').length, 0);
  });

  it('is forgotten at log-out, and closes the stream', async () => {
    const c = bellClient();
    await c.run(['notifications/page-enter', 'account']);
    await c.run(['auth/logged-out']);
    assert.equal(c.core.state.bell, undefined);
    await c.run(['notifications/stream-closed', { reason: 'session-ended' }]);
    assert.deepEqual(c.fx.retries, [], 'no bell, no reconnect');
  });
});

describe('the Notifications page', () => {
  it('pages by cursor, filters the unread ones, lists an arrival on top, and says the count', async () => {
    const items = Array.from({ length: 25 }, (_, i) => note(30 - i, i % 2 === 1));
    const c = bellClient(items);
    await c.run(['notifications/page-enter', 'notifications']);
    await c.run(['notifications/page-open', false]);
    const page = () => c.core.state.notificationsPage!;
    assert.equal(page().items!.length, 20);
    assert.equal(page().nextCursor, items[19]!.cursor);
    await c.run(['notifications/page-more']);
    assert.deepEqual(queryOf(c.requests.at(-1)!), { limit: '20', cursor: items[19]!.cursor });
    assert.equal(page().items!.length, 25);
    assert.equal(page().nextCursor, null);
    await c.run(['notifications/page-more']);
    assert.equal(c.requests.filter((r) => queryOf(r).cursor).length, 1, 'nothing more to ask');

    await c.run(['notifications/page-open', true]);
    assert.deepEqual(queryOf(c.requests.at(-1)!), { limit: '20', unread: 'true' });
    assert.equal(page().items!.length, 13);
    assert.ok(page().items!.every((n) => n['read-at'] === null));
    assert.equal(c.bell().unread, 13);

    await c.run(['notifications/arrived', note(40)]);
    assert.equal(page().items![0]!.id, note(40).id);
    await c.run(['notifications/mark-read', [note(40).id]]);
    assert.notEqual(page().items![0]!['read-at'], null, 'read on the page too, and still listed');
  });

  it('an answer for the filter left behind is dropped', async () => {
    const c = bellClient([note(2), note(1, true)]);
    c.core.dispatch(['notifications/page-open', false]);
    c.core.dispatch(['notifications/page-open', true]);
    await sleep(40);
    assert.equal(c.core.state.notificationsPage!.unreadOnly, true);
    assert.deepEqual(
      c.core.state.notificationsPage!.items!.map((n) => n.id),
      [note(2).id],
    );
  });
});

/** A fake `fetch` for the stream: each call gets the next queued answer, a stream the test writes to, or a refusal. */
function fakeFetch() {
  const calls: Array<{ url: string; headers: Record<string, string>; signal: AbortSignal }> = [];
  const queue: Array<Response | Error> = [];
  const streams: Array<{ send(text: string): void; end(): void }> = [];
  const encoder = new TextEncoder();
  const fetchStream = async (url: string, init: RequestInit) => {
    const signal = init.signal!;
    calls.push({ url, headers: init.headers as Record<string, string>, signal });
    const next = queue.shift();
    if (next instanceof Error) throw next;
    if (next) return next;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    signal.addEventListener('abort', () => controller.error(new DOMException('The operation was aborted', 'AbortError')));
    streams.push({ send: (text) => controller.enqueue(encoder.encode(text)), end: () => controller.close() });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  const refuse = (status: number, headers: Record<string, string> = {}) =>
    queue.push(new Response(JSON.stringify({ type: 'refused', message: 'no' }), { status, headers: { 'content-type': 'application/json', ...headers } }));
  return { fetchStream, calls, streams, refuse, fail: () => queue.push(new TypeError('Failed to fetch')) };
}

/** The whole bell: its events, the real stream effects on a fake fetch, the refresh on the fake transport; retries recorded. */
function liveClient(refresh: 'ok' | 'refused' = 'ok') {
  const net = fakeFetch();
  const client = fakeClient('account', (req) => {
    if (callOf(req) === 'GET /api/notifications') return answer(list([note(2)]));
    if (callOf(req) === 'POST /api/account/refresh')
      return refresh === 'ok' ? answer({ 'access-token': 'access-2', account: ACCOUNT }) : answer({ type: 'unauthorized', message: 'Session ended' }, 401);
    return undefined;
  });
  registerNotifications(client.core);
  registerNotificationStream(client.core, net.fetchStream);
  const retries: number[] = [];
  client.core.regFx('notifications/stream-retry', ({ ms }: { ms: number }) => retries.push(ms));
  return { ...client, net, retries, bell: () => client.core.state.bell! };
}

describe('the live stream', () => {
  it('sends the token and Last-Event-ID, turns its events into arrivals and counts, and says how it ended', async () => {
    const c = liveClient();
    await c.run(['notifications/page-enter', 'account']);
    assert.equal(c.net.calls.length, 1);
    const [call] = c.net.calls;
    assert.equal(call!.url, STREAM_URL);
    assert.deepEqual(call!.headers, { authorization: 'Bearer access-1', accept: 'text/event-stream', 'last-event-id': '102' });
    assert.equal(c.bell().stream.status, 'open');
    const stream = c.net.streams[0]!;
    stream.send(': connected\n\nevent: unread-count\ndata: {"unread-count":1}\n\n');
    stream.send(`id: 103\nevent: notification\ndata: ${JSON.stringify(note(3))}\n\n: heartbeat\n\n`);
    stream.send('event: notification\ndata: not json\n\n');
    await sleep(20);
    assert.equal(c.bell().latest![0]!.id, note(3).id);
    assert.equal(c.bell().unread, 2);
    assert.equal(c.bell().cursor, '103');
    // the server ends it for the token's expiry: a refresh, then the stream again after the last cursor with the new token
    stream.send('event: end\ndata: {"reason":"token-expired"}\n\n');
    stream.end();
    await sleep(50);
    assert.equal(c.requests.filter((r) => callOf(r) === 'POST /api/account/refresh').length, 1);
    assert.equal(c.core.state.token, 'access-2');
    assert.equal(c.net.calls.length, 2);
    assert.deepEqual(c.net.calls[1]!.headers, { authorization: 'Bearer access-2', accept: 'text/event-stream', 'last-event-id': '103' });
    assert.deepEqual(c.retries, [], 'no wait after a refresh');
  });

  it('a 401 refreshes once; a 401 again waits, and the waits grow until a stream opens; a 429 waits its Retry-After', async () => {
    const c = liveClient();
    c.net.refuse(401);
    c.net.refuse(401);
    await c.run(['notifications/page-enter', 'account'], 60);
    assert.equal(c.requests.filter((r) => callOf(r) === 'POST /api/account/refresh').length, 1);
    assert.deepEqual(c.retries, [1000]);
    c.net.fail();
    await c.run(['notifications/reconnect']);
    assert.deepEqual(c.retries, [1000, 2000], 'no answer: a longer wait');
    c.net.refuse(503);
    await c.run(['notifications/reconnect']);
    assert.deepEqual(c.retries, [1000, 2000, 4000]);
    await c.run(['notifications/reconnect']);
    assert.equal(c.bell().stream.status, 'open');
    c.net.streams[0]!.end();
    await sleep(20);
    assert.deepEqual(c.retries, [1000, 2000, 4000, 1000], 'an opened stream starts the waits again; a dropped one comes back');
    c.net.refuse(429, { 'retry-after': '30' });
    await c.run(['notifications/reconnect']);
    assert.equal(c.retries.at(-1), 30_000);
    await c.run(['notifications/reconnect']);
    c.net.streams[1]!.send('event: end\ndata: {"reason":"shutting-down"}\n\n');
    c.net.streams[1]!.end();
    await sleep(20);
    assert.equal(c.retries.at(-1), 1000, 'a draining instance: back soon, to another');
  });

  it('stops when the refresh is refused (the session ended elsewhere), and at log-out at once', async () => {
    const c = liveClient('refused');
    await c.run(['notifications/page-enter', 'account']);
    c.net.streams[0]!.send('event: end\ndata: {"reason":"session-ended"}\n\n');
    c.net.streams[0]!.end();
    await sleep(50);
    assert.equal(c.core.state.token, undefined);
    assert.equal(c.bell().stream.status, 'stopped');
    await c.run(['notifications/reconnect']);
    assert.equal(c.net.calls.length, 1, 'no stream without a session');
    assert.deepEqual(c.retries, []);
    // signed in again as the same account (the bell was not forgotten): live again
    await c.run(['auth/token', 'access-3']);
    await c.run(['notifications/page-enter', 'account']);
    assert.equal(c.net.calls.length, 2);
    assert.equal(c.net.calls[1]!.headers.authorization, 'Bearer access-3');

    const d = liveClient();
    await d.run(['notifications/page-enter', 'account']);
    const { signal } = d.net.calls[0]!;
    assert.equal(signal.aborted, false);
    await d.run(['auth/logged-out']);
    assert.equal(signal.aborted, true, 'the token left: the stream closed');
    assert.deepEqual(d.retries, []);
    assert.equal(d.net.calls.length, 1);
  });

  it('keeps one stream per tab: an account signing in afresh replaces the one open', async () => {
    const c = liveClient();
    await c.run(['notifications/page-enter', 'account']);
    await c.run(['notifications/start', ACCOUNT.id]);
    assert.equal(c.net.calls.length, 2);
    assert.equal(c.net.calls[0]!.signal.aborted, true);
    assert.equal(c.net.calls[1]!.signal.aborted, false);
    assert.deepEqual(c.retries, [], 'the stream closed on purpose is not retried');
  });
});

describe('the preferences grid', () => {
  const GRID: CategoryPreference[] = [
    { category: 'organizations', name: 'Organizations', critical: false, 'in-app': true, email: 'immediately' },
    { category: 'security', name: 'Security', critical: true, 'in-app': true, email: 'immediately' },
    { category: 'billing', name: 'Billing', critical: false, 'in-app': true, email: 'daily' },
  ];

  it('sends only what changed, and never a critical category', () => {
    const fields = { 'in-app:organizations': 'on', 'email:organizations': 'immediately', 'email:billing': 'off' };
    assert.deepEqual(changesOf(GRID, fields), [{ category: 'billing', 'in-app': false, email: 'off' }]);
    assert.deepEqual(
      changesOf(GRID, { 'in-app:organizations': 'on', 'email:organizations': 'immediately', 'in-app:billing': 'on', 'email:billing': 'daily' }),
      [],
    );
  });

  function prefsClient(role = 'admin', refuse = false) {
    let grid = GRID;
    const c = fakeClient('notification-preferences', (req) => {
      switch (callOf(req)) {
        case 'GET /api/account/notification-preferences':
        case `GET /api/orgs/${ORG}/notification-preferences`:
          return answer({ categories: grid });
        case `GET /api/orgs/${ORG}`:
          return answer({ id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role });
        case 'PUT /api/account/notification-preferences':
        case `PUT /api/orgs/${ORG}/notification-preferences`: {
          if (refuse)
            return answer(
              {
                type: 'request-coercion',
                message: 'Invalid request body',
                in: 'body',
                errors: [{ path: '/categories/0', message: 'security is critical: it is always shown and emailed immediately' }],
              },
              400,
            );
          const { categories } = bodyOf(req) as { categories: Array<{ category: string; email?: 'off' }> };
          grid = grid.map((g) => ({ ...g, ...(categories.find((x) => x.category === g.category)?.email ? { email: 'off' as const } : {}) }));
          return answer({ categories: grid });
        }
        default:
          return undefined;
      }
    });
    registerNotificationPreferences(c.core);
    return { ...c, prefs: () => c.core.state.notificationPreferences! };
  }

  it("saves the account's change and says so; nothing changed says that, with no request", async () => {
    const c = prefsClient();
    await c.run(['notification-preferences/open', ACCOUNT_OWNER]);
    assert.deepEqual(c.prefs().categories, GRID);
    const loads = c.prefs().loads;
    await c.run([
      'notification-preferences/save',
      ACCOUNT_OWNER,
      { 'in-app:organizations': 'on', 'email:organizations': 'off', 'in-app:billing': 'on', 'email:billing': 'daily' },
    ]);
    const put = c.requests.find((r) => r.method === 'PUT')!;
    assert.deepEqual(bodyOf(put), { categories: [{ category: 'organizations', email: 'off' }] });
    assert.equal(c.prefs().categories![0]!.email, 'off');
    assert.deepEqual(c.prefs().notice, { tone: 'success', text: 'Saved.' });
    assert.equal(c.prefs().loads, loads + 1, 'the grid shows the answer');
    assert.equal(c.core.state.busy, false);
    await c.run([
      'notification-preferences/save',
      ACCOUNT_OWNER,
      { 'in-app:organizations': 'on', 'email:organizations': 'off', 'in-app:billing': 'on', 'email:billing': 'daily' },
    ]);
    assert.deepEqual(c.prefs().notice, { tone: 'info', text: 'Nothing changed.' });
    assert.equal(c.requests.filter((r) => r.method === 'PUT').length, 1);
    await c.run(['notification-preferences/reset', ACCOUNT_OWNER]);
    assert.deepEqual(bodyOf(c.requests.filter((r) => r.method === 'PUT').at(-1)!), {
      categories: [
        { category: 'organizations', 'in-app': null, email: null },
        { category: 'billing', 'in-app': null, email: null },
      ],
    });
  });

  it("shows a refusal in the server's words", async () => {
    const c = prefsClient('admin', true);
    await c.run(['notification-preferences/open', ACCOUNT_OWNER]);
    await c.run(['notification-preferences/save', ACCOUNT_OWNER, { 'email:organizations': 'off' }]);
    assert.deepEqual(c.prefs().notice, {
      tone: 'error',
      text: 'Invalid request body: security is critical: it is always shown and emailed immediately',
    });
    assert.equal(c.core.state.busy, false);
  });

  it("an organization's defaults: loaded and saved for an admin; a member asks nothing more", async () => {
    const admin = prefsClient('admin');
    await admin.run(['notification-preferences/open', ORG]);
    assert.deepEqual(admin.requests.map(callOf), [`GET /api/orgs/${ORG}`, `GET /api/orgs/${ORG}/notification-preferences`]);
    await admin.run([
      'notification-preferences/save',
      ORG,
      { 'in-app:organizations': 'on', 'email:organizations': 'off', 'in-app:billing': 'on', 'email:billing': 'daily' },
    ]);
    assert.equal(callOf(admin.requests.at(-1)!), `PUT /api/orgs/${ORG}/notification-preferences`);
    assert.equal(admin.prefs().notice?.tone, 'success');
    const member = prefsClient('member');
    await member.run(['notification-preferences/open', ORG]);
    assert.deepEqual(member.requests.map(callOf), [`GET /api/orgs/${ORG}`]);
    assert.equal(member.prefs().org?.role, 'member');
  });
});
