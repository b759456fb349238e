/** Helpers for the notification tests: an SSE reader over `fetch`, as the client reads the stream. */
import assert from 'node:assert/strict';

export interface StreamEvent {
  event: string;
  id?: string;
  data: any;
}

export interface OpenStream {
  status: number;
  /** the next event of `name` (others are kept), within `ms` */
  next(name: string, ms?: number): Promise<StreamEvent>;
  /** resolves when the server ended the stream */
  ended: Promise<void>;
  close(): void;
}

/** Opens `APP_URL/api/notifications/stream` with the token (and a Last-Event-ID). */
export async function openStream(url: string, token: string, lastEventId?: string): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${url}/api/notifications/stream`, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: controller.signal,
  });
  const events: StreamEvent[] = [];
  const waiters: Array<() => void> = [];
  let endedResolve!: () => void;
  const ended = new Promise<void>((resolve) => (endedResolve = resolve));
  if (res.status === 200 && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const lines = block.split('\n').filter((l) => !l.startsWith(':'));
            if (lines.length === 0) continue;
            const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
            events.push({ event: field('event') ?? 'message', id: field('id'), data: JSON.parse(field('data') ?? 'null') });
            for (const wake of waiters.splice(0)) wake();
          }
        }
      } catch {
        // aborted by the test
      }
      endedResolve();
      for (const wake of waiters.splice(0)) wake();
    })();
  } else {
    await res.arrayBuffer().catch(() => undefined);
    endedResolve();
  }
  return {
    status: res.status,
    ended,
    async next(name, ms = 3000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const i = events.findIndex((e) => e.event === name);
        if (i >= 0) return events.splice(i, 1)[0]!;
        const left = deadline - Date.now();
        assert.ok(left > 0, `no "${name}" event within ${ms} ms (had: ${events.map((e) => e.event).join(', ') || 'none'})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => controller.abort(),
  };
}
