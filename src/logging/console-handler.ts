/** Console output: one JSON object per line, or a human-readable line in dev. */
import type { Kind } from './levels.js';
import type { LogEntry, LogHandler } from './logger.js';

const COLORS: Record<string, string> = { trace: '90', debug: '36', info: '32', warn: '33', error: '31', fatal: '35' };

export function formatPretty(entry: LogEntry, color: boolean): string {
  const time = entry.timestamp.slice(11, 23);
  const level = entry.level.toUpperCase().padEnd(5);
  const lvl = color ? `\x1b[${COLORS[entry.level]}m${level}\x1b[0m` : level;
  const data = Object.keys(entry.data).length ? ' ' + JSON.stringify(entry.data) : '';
  const req = entry.ctx['req-id'] ? ` [${String(entry.ctx['req-id']).slice(0, 8)}]` : '';
  return `${time} ${lvl} ${entry.ns}:${entry.line ?? '?'} ${entry.id} ${entry.msg}${data}${req}\n`;
}

export class ConsoleHandler implements LogHandler {
  constructor(private readonly format: 'pretty' | 'json', private readonly stream: NodeJS.WritableStream = process.stdout) {}

  write(entry: LogEntry, _kind: Kind): void {
    this.stream.write(this.format === 'json' ? JSON.stringify(entry) + '\n' : formatPretty(entry, (this.stream as { isTTY?: boolean }).isTTY === true));
  }
}
