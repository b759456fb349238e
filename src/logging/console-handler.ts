/** Console output: one JSON object per line, or a human-readable line in dev. */
import type { Kind } from './levels.js';
import type { LogEntry, LogHandler } from './logger.js';

const COLORS: Record<string, string> = { trace: '90', debug: '36', info: '32', warn: '33', error: '31', fatal: '35' };

// C0 controls (newline, carriage return, ESC starting a terminal sequence), DEL, C1 controls,
// the Unicode line and paragraph separators, and the bidirectional overrides: any of them in a
// field could end the line, forge another one or recolour the terminal (issue 14, item 8).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `s` with every character that a terminal would act on written as an escape. */
export function escapeControl(s: string): string {
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(s)) return s;
  return s.replace(UNSAFE, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function formatPretty(entry: LogEntry, color: boolean): string {
  const time = entry.timestamp.slice(11, 23);
  const level = entry.level.toUpperCase().padEnd(5);
  const lvl = color ? `\x1b[${COLORS[entry.level]}m${level}\x1b[0m` : level;
  // JSON.stringify escapes C0 controls in keys and values, not DEL, C1 or U+2028
  const data = Object.keys(entry.data).length ? ' ' + escapeControl(JSON.stringify(entry.data)) : '';
  const req = entry.ctx['req-id'] ? ` [${escapeControl(String(entry.ctx['req-id']).slice(0, 8))}]` : '';
  return `${time} ${lvl} ${escapeControl(entry.ns)}:${entry.line ?? '?'} ${escapeControl(entry.id)} ${escapeControl(entry.msg)}${data}${req}\n`;
}

/** A JSON line with the characters JSON leaves raw (DEL, C1, U+2028, …) escaped as well. */
function jsonLine(entry: LogEntry): string {
  return escapeControl(JSON.stringify(entry)) + '\n';
}

export class ConsoleHandler implements LogHandler {
  constructor(private readonly format: 'pretty' | 'json', private readonly stream: NodeJS.WritableStream = process.stdout) {}

  write(entry: LogEntry, _kind: Kind): void {
    this.stream.write(this.format === 'json' ? jsonLine(entry) : formatPretty(entry, (this.stream as { isTTY?: boolean }).isTTY === true));
  }
}
