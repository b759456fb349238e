/**
 * A reader of `text/event-stream` as the HTML standard parses it ("Server-sent events"), for a
 * stream read with `fetch` (the notification stream needs the access token in `Authorization`,
 * which EventSource cannot send): text in, whatever chunks it comes in; an event out at each blank
 * line that ends one with data. Lines end with CRLF, LF or CR; a line starting with `:` is a
 * comment (the server's heartbeat); `data` lines join with a line feed; `id` is kept across events
 * as the standard's last event id is.
 */

export interface SseEvent {
  /** the `event` field; `message` when there was none */
  event: string;
  data: string;
  /** the last `id` seen so far (this event's, or an earlier one's) */
  id: string;
}

export interface SseParser {
  /** the next piece of the decoded text */
  push(text: string): void;
}

export function sseParser(onEvent: (event: SseEvent) => void): SseParser {
  let buffer = '';
  let started = false;
  let type = '';
  let data: string[] = [];
  let lastId = '';

  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) onEvent({ event: type || 'message', data: data.join('\n'), id: lastId });
      type = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    // `retry` and unknown fields: the client keeps its own reconnection policy
  };

  return {
    push(text) {
      buffer += text;
      if (!started && buffer.length > 0) {
        started = true;
        if (buffer.startsWith('\uFEFF')) buffer = buffer.slice(1);
      }
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        if (end < 0) return;
        // a CR at the very end may be the first half of a CRLF the next chunk completes
        if (buffer[end] === '\r' && end === buffer.length - 1) return;
        const width = buffer.startsWith('\r\n', end) ? 2 : 1;
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + width);
        line(text);
      }
    },
  };
}
