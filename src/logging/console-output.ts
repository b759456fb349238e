/**
 * Where console lines go, written so that the console can never hurt the server: a write never
 * blocks the event loop and never throws, a full pipe holds back a bounded backlog (then lines
 * are dropped and counted), and a pipe whose reader is gone (EPIPE, EBADF) is given up, tried
 * again every few seconds (a console whose reader reads again is written again).
 */
import { writeSync } from 'node:fs';
import { countLines, type SinkFailures } from './sink-failures.js';

/** what a full pipe may hold back before further lines are dropped */
export const MAX_BACKLOG_BYTES = 1 << 20;
/** how soon a full pipe is tried again */
const RETRY_MS = 20;
/** how long a console that failed is left alone before a write tries it again */
export const PROBE_MS = 5_000;
/** how long the process, about to end, waits for a full pipe to take its last lines */
const EXIT_WAIT_MS = 2_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

export interface ConsoleOutput {
  /** `text` ends with a newline; `bytes` is its length in bytes */
  write(text: string, bytes: number): void;
  /** writes the backlog before the process ends, waiting a bounded time for a full pipe */
  drainBeforeExit(): void;
  /** stops its timer */
  close(): void;
}

/**
 * A file descriptor (the process's standard output) written with `writeSync`. Node makes a
 * standard output pipe non-blocking once `process.stdout` exists, so a full pipe answers EAGAIN
 * at once instead of stopping the process: the constructor makes sure it does.
 */
export class FdOutput implements ConsoleOutput {
  private backlog: Buffer[] = [];
  private backlogBytes = 0;
  private retry: NodeJS.Timeout | undefined;
  private brokenAt: number | undefined;
  private brokenReason = '';

  constructor(
    private readonly fd: number,
    private readonly failures: SinkFailures,
    private readonly now: () => number = Date.now,
  ) {
    if (fd === 1) guardStandardStream(process.stdout);
  }

  write(text: string, bytes: number): void {
    if (this.brokenAt !== undefined) {
      if (this.now() - this.brokenAt < PROBE_MS) {
        this.failures.failed(this.brokenReason, countLines(text));
        return;
      }
      this.brokenAt = undefined;
    }
    if (this.backlogBytes > 0) {
      this.hold(Buffer.from(text));
      return;
    }
    let written: number;
    try {
      written = writeSync(this.fd, text);
    } catch (err) {
      this.onError(err as NodeJS.ErrnoException, Buffer.from(text));
      return;
    }
    if (written < bytes) this.hold(Buffer.from(text).subarray(written));
    else if (this.failures.failing) this.failures.recovered();
  }

  /** Keeps what the pipe did not take, up to the bound; past it, the lines are dropped. */
  private hold(rest: Buffer): void {
    if (this.backlogBytes + rest.length > MAX_BACKLOG_BYTES && this.backlogBytes > 0) {
      this.failures.failed('EAGAIN: the pipe is full, its reader does not read', countLines(rest));
      return;
    }
    this.backlog.push(rest);
    this.backlogBytes += rest.length;
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retry === undefined) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.writeBacklog();
      }, RETRY_MS);
      // the exit hook writes a backlog: it never keeps the process alive
      this.retry.unref();
    }
  }

  /** One pass over the backlog; true when it is empty. */
  private writeBacklog(): boolean {
    if (this.backlog.length === 0) return true;
    while (this.backlog.length > 0) {
      const head = this.backlog[0];
      let written: number;
      try {
        written = writeSync(this.fd, head);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          this.scheduleRetry();
          return false;
        }
        this.giveUp(code ?? String(err));
        return true;
      }
      this.backlogBytes -= written;
      if (written < head.length) this.backlog[0] = head.subarray(written);
      else this.backlog.shift();
    }
    if (this.failures.failing) this.failures.recovered();
    return true;
  }

  private onError(err: NodeJS.ErrnoException, data: Buffer): void {
    if (err.code === 'EAGAIN') {
      this.hold(data);
      return;
    }
    this.backlog.push(data);
    this.backlogBytes += data.length;
    this.giveUp(err.code ?? err.message);
  }

  /** The reader is gone (EPIPE, EBADF, …): the backlog is dropped, and writes wait for the next probe. */
  private giveUp(code: string): void {
    const lost = this.backlog.reduce((n, b) => n + countLines(b), 0);
    this.backlog = [];
    this.backlogBytes = 0;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    this.brokenAt = this.now();
    this.brokenReason = code === 'EPIPE' || code === 'EBADF' ? `${code}: its reader is gone` : code;
    this.failures.failed(this.brokenReason, lost);
  }

  drainBeforeExit(): void {
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    for (let waited = 0; !this.writeBacklog() && waited < EXIT_WAIT_MS; waited += RETRY_MS) {
      if (this.retry !== undefined) clearTimeout(this.retry);
      this.retry = undefined;
      Atomics.wait(pause, 0, 0, RETRY_MS);
    }
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    if (this.backlogBytes > 0) this.giveUp('EAGAIN: the pipe stayed full as the process ended');
  }

  close(): void {
    this.drainBeforeExit();
  }
}

/**
 * A stream of the caller's (tests) or the dev console's `process.stdout`: Node queues what it
 * cannot write at once, so past the bound lines are dropped, and an error ends the writing.
 */
export class StreamOutput implements ConsoleOutput {
  private broken: string | undefined;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly failures: SinkFailures,
  ) {
    if (stream === process.stdout) guardStandardStream(process.stdout);
    if (typeof stream.on === 'function') {
      stream.on('error', (err: NodeJS.ErrnoException) => {
        this.broken = err.code ?? err.message;
      });
    }
  }

  write(text: string): void {
    const queued = (this.stream as { writableLength?: number }).writableLength ?? 0;
    if (this.broken !== undefined || (this.stream as { destroyed?: boolean }).destroyed === true) {
      this.failures.failed(this.broken ?? 'the stream is closed', countLines(text));
    } else if (queued > MAX_BACKLOG_BYTES) {
      this.failures.failed('the stream does not drain', countLines(text));
    } else {
      this.stream.write(text);
      if (this.failures.failing) this.failures.recovered();
    }
  }

  drainBeforeExit(): void {}

  close(): void {}
}

const guarded = new WeakSet<NodeJS.WriteStream>();

/**
 * The process's own standard streams: their errors (EPIPE once the reader is gone) are the
 * log sinks' business, never an uncaught exception; creating them makes a pipe non-blocking.
 */
export function guardStandardStream(stream: NodeJS.WriteStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', () => undefined);
}

/**
 * One line on standard error that can neither block nor throw: a notice about a failing sink,
 * given up if standard error fails too.
 */
export function writeStandardError(line: string): void {
  guardStandardStream(process.stderr);
  try {
    writeSync(2, line);
  } catch {
    // standard error is gone as well: there is nowhere left to say it
  }
}
