/**
 * The prod JSON log file: one JSON object per line, rotated by interval and by size with
 * the naming of telemere's file handler (see docs/logging.md):
 *
 *   logs/saas-app.json                       the live file, always
 *   logs/saas-app.json-2026-11-22d.1.gz      newest archived part of that day
 *
 * Writes are queued and drained by one async loop, so request handling never waits on the
 * disk, lines are never interleaved or torn, and rotation happens between whole lines. The loop
 * takes a batch every {@link BATCH_WAIT_MS} at most: under load the lines of every request
 * answered meanwhile leave in one write (a write costs a hand-off to libuv's thread pool, a
 * system call and the thread switches, whatever its size: about 30 µs of CPU); `flush` and
 * `close` return once everything queued is written and archived.
 *
 * A rotation only renames the live file and opens a new one; the renamed file is compressed
 * into its archive (log-archives.ts) in the background, one archive at a time. Compressing
 * 100 MB takes about a second, during which the queue would otherwise fill under load and drop
 * lines.
 */
import { appendFileSync } from 'node:fs';
import { mkdir, open, rename, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { LogFileSettings } from '../config.js';
import type { Kind } from './levels.js';
import type { LogEntry, LogHandler } from './logger.js';
import { archiveRotatedFile, intervalStart, pruneIntervals } from './log-archives.js';
import { SinkFailures } from './sink-failures.js';

/** how long queued lines wait for more before they are written, ms */
export const BATCH_WAIT_MS = 5;
/** the most lines held while the file fails (a full disk): past it new lines are dropped (counted) */
export const MAX_QUEUED_LINES = 10_000;
/**
 * the most characters held while the file works but the disk is slow (the kernel holding writes
 * back under a load): a burst rides it out unharmed, a disk that never catches up costs at most this
 */
export const MAX_QUEUED_CHARS = 32 * 1024 * 1024;
/** the first wait after a failed write (a full disk, a directory the process may not write), ms */
export const RETRY_FIRST_MS = 1_000;
/** the longest wait between tries, ms */
export const RETRY_MAX_MS = 30_000;

export interface RotatingFileOptions extends LogFileSettings {
  /** injectable for tests */
  clock?: () => Date;
}

export class RotatingFileHandler implements LogHandler {
  readonly failures: SinkFailures;
  private queue: string[] = [];
  private queuedChars = 0;
  /** while the file fails: the wait before the next try, and the timer of that wait */
  private retryMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | null = null;
  private file: FileHandle | null = null;
  private size = 0;
  private fileInterval: string | null = null;
  /** set by close(): lines that still come (a request finishing during shutdown) are appended synchronously */
  private closed = false;
  private readonly clock: () => Date;
  /** the archives being made, in rotation order (parts are numbered by it) */
  private archiving: Promise<void> = Promise.resolve();
  private rotations = 0;

  constructor(private readonly options: RotatingFileOptions) {
    this.clock = options.clock ?? (() => new Date());
    this.failures = new SinkFailures('file', () => this.clock().getTime());
  }

  write(entry: LogEntry, _kind: Kind): void {
    this.writeLine(JSON.stringify(entry));
  }

  writeJson(json: string, _entry: LogEntry, _kind: Kind): void {
    this.writeLine(json);
  }

  /** Queues one line (without its newline). */
  writeLine(line: string): void {
    if (this.closed && !this.draining) {
      this.appendAfterClose(line);
      return;
    }
    if (this.failures.failing ? this.queue.length >= MAX_QUEUED_LINES : this.queuedChars >= MAX_QUEUED_CHARS) {
      this.failures.failed(this.failures.failing ? 'the file cannot be written' : 'lines come faster than the file takes them', 1);
      return;
    }
    // without its newline: the batch's join adds them (a `line + '\n'` per entry is one more copy)
    this.queue.push(line);
    this.queuedChars += line.length;
    if (!this.draining && this.retryTimer === undefined) this.draining = this.drain();
  }

  /** After close (a request finishing during shutdown): appended at once, unless the file fails. */
  private appendAfterClose(line: string): void {
    if (this.failures.failing) {
      this.failures.failed('the file cannot be written', 1);
      return;
    }
    try {
      appendFileSync(this.options.path, line + '\n');
    } catch (err) {
      this.failures.failed(errorReason(err), 1);
    }
  }

  /** Returns once what is queued is written (or given up while the file fails) and archived. */
  async flush(): Promise<void> {
    while (this.draining !== null) await this.draining;
    await this.archiving;
  }

  async close(): Promise<void> {
    this.closed = true;
    // a file waiting for its next try gets one more now; lines queued meanwhile go through the open file
    if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      if (this.queue.length > 0 && !this.draining) this.draining = this.drain();
    }
    await this.flush();
    if (this.queue.length > 0) this.failures.failed('the file cannot be written as the process ends', this.queue.length);
    this.queue = [];
    this.queuedChars = 0;
    const file = this.file;
    this.file = null;
    await file?.close().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        await delay(BATCH_WAIT_MS);
        const batch = this.queue;
        this.queue = [];
        this.queuedChars = 0;
        try {
          await this.writeBatch(batch);
          this.retryMs = 0;
          if (this.failures.failing) this.failures.recovered();
        } catch (err) {
          this.failures.failed(errorReason(err), batch.length);
          await this.file?.close().catch(() => undefined);
          this.file = null;
          // tried again later, not at once: a full disk stays full for a while
          if (!this.closed) this.retryLater();
          return;
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private retryLater(): void {
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs === 0 ? RETRY_FIRST_MS : this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.queue.length > 0 && !this.draining) this.draining = this.drain();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private async ensureOpen(): Promise<FileHandle> {
    if (this.file) return this.file;
    await mkdir(dirname(this.options.path), { recursive: true });
    try {
      const st = await stat(this.options.path);
      this.size = st.size;
      this.fileInterval = intervalStart(st.mtime, this.options.interval);
    } catch {
      this.size = 0;
      this.fileInterval = null;
    }
    this.file = await open(this.options.path, 'a');
    return this.file;
  }

  private async writeBatch(lines: string[]): Promise<void> {
    let file = await this.ensureOpen();
    const current = intervalStart(this.clock(), this.options.interval);
    if (this.size > 0 && this.fileInterval !== null && this.fileInterval !== current) {
      await this.rotate(this.fileInterval);
      this.afterArchives(() => pruneIntervals(this.options));
      file = await this.ensureOpen();
    }
    this.fileInterval = current;

    // the common case: the whole batch fits in the live file, one join and one measure (the
    // trailing newline joined in: an appended one would be flattened into another copy to measure)
    lines.push('');
    const whole = lines.join('\n');
    lines.pop();
    const wholeBytes = Buffer.byteLength(whole);
    if (this.size + wholeBytes <= this.options.maxFileSize) {
      await writeAll(file, whole, wholeBytes);
      this.size += wholeBytes;
      return;
    }
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line) + 1;
      if (this.size + chunkBytes > 0 && this.size + chunkBytes + bytes > this.options.maxFileSize) {
        if (chunk.length) {
          await writeAll(file, chunk.join('\n') + '\n', chunkBytes);
          this.size += chunkBytes;
          chunk = [];
          chunkBytes = 0;
        }
        await this.rotate(current);
        file = await this.ensureOpen();
      }
      chunk.push(line);
      chunkBytes += bytes;
    }
    if (chunk.length) {
      await writeAll(file, chunk.join('\n') + '\n', chunkBytes);
      this.size += chunkBytes;
    }
  }

  /**
   * The live file is renamed aside (writing goes on in a new one at once) and becomes part 1 of
   * `start` in the background: older parts shift up, the one past the limit goes.
   */
  private async rotate(start: string): Promise<void> {
    const { path } = this.options;
    await this.file?.close();
    this.file = null;
    const pending = `${path}.${process.pid}.${++this.rotations}.rotating`;
    await rename(path, pending);
    this.size = 0;
    this.fileInterval = null;
    this.afterArchives(() => archiveRotatedFile(pending, start, this.options));
  }

  /**
   * Runs `step` after the archives begun before it. A failed one leaves its renamed file in
   * place (no line is lost) and is said on the other sinks.
   */
  private afterArchives(step: () => Promise<void>): void {
    this.archiving = this.archiving.then(step).catch((err: unknown) => {
      const reason = errorReason(err);
      this.failures.notify('warn', 'log/archive-failed', `A rotated log file could not be archived (${reason}); it stays beside the live file`, {
        sink: this.failures.sink,
        reason,
      });
    });
  }
}

/** One write of `text` (`bytes` long) to the file opened for appending; the rest again if it took only part. */
async function writeAll(file: FileHandle, text: string, bytes: number): Promise<void> {
  const { bytesWritten } = await file.write(text);
  if (bytesWritten < bytes) await file.appendFile(Buffer.from(text).subarray(bytesWritten));
}

function errorReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.syscall ?? 'write'}` : String(err);
}
