/** In a cluster worker: each entry goes to the primary, which writes the one JSON file. */
import type { Kind } from './levels.js';
import type { LogEntry, LogHandler } from './logger.js';

export const LOG_CHANNEL = 'saas.log-line';

export interface LogMessage {
  channel: typeof LOG_CHANNEL;
  line: string;
}

export function isLogMessage(msg: unknown): msg is LogMessage {
  return typeof msg === 'object' && msg !== null && (msg as { channel?: unknown }).channel === LOG_CHANNEL;
}

export class PrimaryFileHandler implements LogHandler {
  write(entry: LogEntry, kind: Kind): void {
    this.writeJson(JSON.stringify(entry), entry, kind);
  }

  writeJson(json: string, _entry: LogEntry, _kind: Kind): void {
    process.send?.({ channel: LOG_CHANNEL, line: json } satisfies LogMessage);
  }
}
