/**
 * The live stream's effects (docs/client.md, "Notifications"): one `GET /api/notifications/stream`
 * per tab, read with `fetch` (the access token goes in `Authorization`, which EventSource cannot
 * send) and sse.ts. Its events become `notifications/arrived` and `notifications/unread-count`;
 * when it ends (the server's `end`, a refusal, a dropped connection) `notifications/stream-closed`
 * says how, and events.ts decides what next. The effects only open, close and wait:
 *
 *   notifications/stream-open   `{lastEventId?}`: opens the tab's stream (closing one still open)
 *   notifications/stream-close  closes it, and cancels a retry waiting
 *   notifications/stream-retry  `{ms}`: `notifications/reconnect` after ms to 1.5 × ms (tabs of a
 *                               restarted server do not all come back at once)
 *
 * The token leaving the state (log-out, a refused refresh) closes the stream at once.
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';
import type { StreamClosed } from './events.js';
import { sseParser } from './sse.js';

export const STREAM_URL = '/api/notifications/stream';

export type StreamFetch = (url: string, init: RequestInit) => Promise<Response>;

export function registerNotificationStream(core: EventCore<AppState>, fetchStream: StreamFetch = (url, init) => fetch(url, init)): void {
  let current: AbortController | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const stop = () => {
    current?.abort();
    current = undefined;
    clearTimeout(retry);
    retry = undefined;
  };

  async function read(controller: AbortController, token: string, lastEventId: string | undefined): Promise<void> {
    // a later open or a close replaced this stream: it says nothing more
    const mine = () => current === controller;
    const closed: StreamClosed = {};
    try {
      const res = await fetchStream(STREAM_URL, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal: controller.signal,
        cache: 'no-store',
        credentials: 'same-origin',
      });
      if (res.status !== 200 || !res.body) {
        closed.status = res.status;
        const retryAfter = Number(res.headers.get('retry-after'));
        if (retryAfter > 0) closed.retryAfterS = retryAfter;
        await res.body?.cancel().catch(() => undefined);
      } else {
        if (mine()) core.dispatch(['notifications/stream-opened']);
        const parser = sseParser((e) => {
          if (!mine()) return;
          let data: unknown;
          try {
            data = JSON.parse(e.data);
          } catch {
            return;
          }
          if (e.event === 'notification') core.dispatch(['notifications/arrived', data]);
          else if (e.event === 'unread-count') core.dispatch(['notifications/unread-count', (data as { 'unread-count': number })['unread-count']]);
          else if (e.event === 'end') closed.reason = String((data as { reason?: unknown }).reason ?? 'dropped');
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.push(value);
        }
        closed.reason ??= 'dropped';
      }
    } catch {
      closed.reason ??= 'network';
    }
    if (!mine()) return;
    current = undefined;
    core.dispatch(['notifications/stream-closed', closed]);
  }

  core.regFx('notifications/stream-open', ({ lastEventId }: { lastEventId?: string }) => {
    stop();
    const token = core.state.token;
    if (!token) return;
    const controller = new AbortController();
    current = controller;
    void read(controller, token, lastEventId);
  });
  core.regFx('notifications/stream-close', () => stop());
  core.regFx('notifications/stream-retry', ({ ms }: { ms: number }) => {
    clearTimeout(retry);
    retry = setTimeout(
      () => {
        retry = undefined;
        core.dispatch(['notifications/reconnect']);
      },
      ms * (1 + Math.random() / 2),
    );
  });
  core.subscribe((state) => {
    if (!state.token && (current || retry)) stop();
  });
}
