/** Console output: one JSON object per line, or a human-readable line in dev. */
import cluster from 'node:cluster';
import type { Kind } from './levels.js';
import { FdOutput, StreamOutput, type ConsoleOutput } from './console-output.js';
import type { LogEntry, LogHandler } from './logger.js';
import { SinkFailures } from './sink-failures.js';

const COLORS: Record<string, string> = { trace: '90', debug: '36', info: '32', warn: '33', error: '31', fatal: '35' };

// C0 controls (newline, carriage return, ESC starting a terminal sequence), DEL, C1 controls,
// the Unicode line and paragraph separators, and the bidirectional overrides: any of them in a
// field could end the line, forge another one or recolour the terminal.
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
function jsonLine(json: string): string {
  return escapeControl(json) + '\n';
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

export interface ConsoleOptions {
  /**
   * Gather JSON lines and write them together (the way pino's sonic-boom does), instead of a
   * write per entry. Default: on for JSON to the process's standard output; off for a stream
   * of your own, whose writes are queued in memory already, and for the dev console, read as it
   * comes.
   */
  buffered?: boolean;
  /** the longest wait before gathered lines are written, ms (default 100) */
  flushIntervalMs?: number;
  /**
   * the most bytes one write may carry (default: {@link defaultMaxWriteBytes}); a single longer
   * line is written alone, as it would be unbuffered
   */
  maxWriteBytes?: number;
}

/**
 * 4 KiB in a cluster worker: up to that size a write to a pipe cannot interleave with another
 * process's, and the workers share the standard output. 64 KiB for a process writing alone,
 * so that under load a write carries a hundred lines rather than ten (a system call each).
 */
export function defaultMaxWriteBytes(isClusterWorker: boolean = cluster.isWorker): number {
  return isClusterWorker ? 4096 : 65536;
}

/**
 * Console output. JSON to the process's standard output is written to its file descriptor
 * directly: Node's stream would queue without bound what a full pipe does not take, and lose
 * it when the process exits. A failing console (a full pipe, a reader gone) never blocks nor
 * throws: see console-output.ts. Buffered, lines are written when the next would not fit in one
 * write, at most `flushIntervalMs` after the first of them, at once for a fatal entry (the
 * process is about to end), on `flush` and `close` (SIGTERM's shutdown closes the logs), and
 * when the process exits (`process.exit`, an uncaught exception, the end of the event loop) or
 * is sent a terminating signal: a line is lost only if the process is killed outright
 * (SIGKILL), as with sonic-boom.
 */
export class ConsoleHandler implements LogHandler {
  private buffered: boolean;
  readonly failures = new SinkFailures('console');
  private readonly output: ConsoleOutput;
  private readonly flushIntervalMs: number;
  private readonly maxWriteBytes: number;
  private pending = '';
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onExit = () => this.flushBeforeExit();
  /**
   * A terminating signal: written first. When nothing else listens for it (the server installs
   * its shutdown later in start-up), the signal is raised again without this listener, so the
   * process ends as it would have.
   */
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.flushBeforeExit();
    if (process.listenerCount(signal) === 1) {
      this.unhook();
      process.kill(process.pid, signal);
    }
  };

  constructor(
    private readonly format: 'pretty' | 'json',
    private readonly stream: NodeJS.WritableStream = process.stdout,
    options: ConsoleOptions = {},
  ) {
    const toStandardOutput = format === 'json' && stream === process.stdout;
    // the process's standard output is written to its descriptor directly (see console-output.ts)
    this.output = toStandardOutput ? new FdOutput(1, this.failures) : new StreamOutput(stream, this.failures);
    this.buffered = options.buffered ?? toStandardOutput;
    this.flushIntervalMs = options.flushIntervalMs ?? 100;
    this.maxWriteBytes = options.maxWriteBytes ?? defaultMaxWriteBytes();
    if (format === 'json') this.writeJson = (json, entry) => this.writeLine(jsonLine(json), entry.level === 'fatal');
    if (this.buffered) {
      process.on('exit', this.onExit);
      for (const signal of SIGNALS) process.on(signal, this.onSignal);
    }
  }

  private unhook(): void {
    process.removeListener('exit', this.onExit);
    for (const signal of SIGNALS) process.removeListener(signal, this.onSignal);
  }

  write(entry: LogEntry, _kind: Kind): void {
    if (this.format !== 'json') {
      const line = formatPretty(entry, (this.stream as { isTTY?: boolean }).isTTY === true);
      this.output.write(line, Buffer.byteLength(line));
      return;
    }
    this.writeLine(jsonLine(JSON.stringify(entry)), entry.level === 'fatal');
  }

  /** The backend's JSON of an entry (made once for the file and the console); JSON format only. */
  readonly writeJson?: (json: string, entry: LogEntry, kind: Kind) => void;

  private writeLine(line: string, fatal: boolean): void {
    const bytes = Buffer.byteLength(line);
    if (!this.buffered) {
      this.output.write(line, bytes);
      if (fatal) this.output.drainBeforeExit();
      return;
    }
    if (this.pendingBytes > 0 && this.pendingBytes + bytes > this.maxWriteBytes) this.flushNow();
    this.pending += line;
    this.pendingBytes += bytes;
    // a fatal entry: the process is about to end, maybe killed outright; what a full pipe holds back goes now too
    if (fatal) this.flushBeforeExit();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flushNow();
      }, this.flushIntervalMs);
      // a pending write never keeps the process alive: the exit hook writes it
      this.timer.unref();
    }
  }

  /** Writes the gathered lines now. */
  flushNow(): void {
    if (this.pendingBytes === 0) return;
    const chunk = this.pending;
    const bytes = this.pendingBytes;
    this.pending = '';
    this.pendingBytes = 0;
    this.output.write(chunk, bytes);
  }

  /** The process is about to end: what is gathered, and what a full pipe holds back, is written now. */
  private flushBeforeExit(): void {
    this.flushNow();
    this.output.drainBeforeExit();
  }

  async flush(): Promise<void> {
    this.flushNow();
  }

  /** Writes what is gathered; later entries (a request finishing during shutdown) are written one by one. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.flushBeforeExit();
    if (this.buffered) this.unhook();
    this.buffered = false;
  }
}
