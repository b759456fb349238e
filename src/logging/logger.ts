/**
 * The one logging backend. Every signal, ours (`log`) and third-party (`slf4j`), passes the
 * same level filter and reaches the same handlers. The filter runs first, so a signal that
 * is filtered out costs a cached map lookup: no stack capture, no copy, no serialisation.
 */
import { currentContext, withTraceIds, type LogContext } from './context.js';
import type { LevelFilter } from './filter.js';
import { LEVEL_VALUE, type Kind, type Level } from './levels.js';
import type { Redactor } from './redact.js';
import { mayHoldSecret, redactText } from './redact-links.js';
import { writeStandardError } from './console-output.js';
import type { SinkFailures, SinkName } from './sink-failures.js';
import { originalPosition, sourceStack } from './source-positions.js';

/** One log entry, with exactly the fields of docs/logging.md, "Signals". */
export interface LogEntry {
  timestamp: string;
  level: Level;
  id: string;
  msg: string;
  ns: string;
  line: number | null;
  data: Record<string, unknown>;
  ctx: LogContext;
}

export interface LogHandler {
  /** Must not keep `entry` beyond the call: the context object goes on changing. */
  write(entry: LogEntry, kind: Kind): void;
  /**
   * For a handler that writes the entry as one JSON object: called instead of `write` with the
   * entry's `JSON.stringify`, made once per entry for every such handler (the file and the
   * console in prod).
   */
  writeJson?(json: string, entry: LogEntry, kind: Kind): void;
  flush?(): Promise<void>;
  close?(): Promise<void>;
  /** a sink that can fail (the console, the file): what it dropped, and how its failure is said */
  readonly failures?: SinkFailures;
}

export interface EmitOptions {
  /** the request context to use when the caller runs outside the request's async context */
  ctx?: LogContext;
}

export type LogData = Record<string, unknown>;

// Source lines: V8 gives the position in the emitted JS, the source map (tsx's, or the
// `.js.map` beside a compiled file: source-positions.ts) turns it into the TypeScript line. Capturing a stack costs
// ~30 µs inside a busy server, so the line is resolved once per signal (namespace, id and
// level): a signal id names one call site, as the `<group>/<name>` convention intends.
// by namespace, then id, then level: lookups with the caller's own strings (no key built per entry)
const signalLines = new Map<string, Map<string, Partial<Record<Level, number | null>>>>();

/** A function whose caller's line an entry records (the logging call the code made). */
export type LoggingCall = (...args: never[]) => unknown;

function callerLine(below: LoggingCall): number | null {
  const prevLimit = Error.stackTraceLimit;
  const prevPrepare = Error.prepareStackTrace;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  try {
    Error.stackTraceLimit = 1;
    Error.prepareStackTrace = (_err, sites) => sites;
    Error.captureStackTrace(holder, below);
    const site = holder.stack?.[0];
    if (!site) return null;
    const file = site.getFileName() ?? '';
    const line = site.getLineNumber();
    const col = site.getColumnNumber() ?? 1;
    if (line === null) return null;
    // no source map: the JS line is the best we have
    return (file && originalPosition(file, line, col)?.line) || line;
  } finally {
    Error.prepareStackTrace = prevPrepare;
    Error.stackTraceLimit = prevLimit;
  }
}

export class LogBackend {
  private readonly handlers: LogHandler[];
  // formatting a timestamp costs ~1 µs; under load many entries share a millisecond
  private lastMs = Number.NaN;
  private lastTimestamp = '';

  /** a handler that threw has been said on standard error (once: it may throw on every entry) */
  private handlerFailureSaid = false;

  constructor(
    readonly filter: LevelFilter,
    handlers: LogHandler[],
    private readonly redact: Redactor,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.handlers = [];
    for (const handler of handlers) this.addHandler(handler);
  }

  addHandler(handler: LogHandler): void {
    this.handlers.push(handler);
    if (handler.failures) handler.failures.notify = (level, id, msg, data) => this.sayElsewhere(handler, level, id, msg, data);
  }

  /** entries dropped by each sink that can fail, since start (the metric reads it) */
  droppedEntries(): Partial<Record<SinkName, number>> {
    const dropped: Partial<Record<SinkName, number>> = {};
    for (const handler of this.handlers) {
      if (handler.failures) dropped[handler.failures.sink] = (dropped[handler.failures.sink] ?? 0) + handler.failures.total;
    }
    return dropped;
  }

  /**
   * A sink's failure, said on every other sink; a console's on standard error too (the
   * operator's other view of the process when its standard output's reader is gone).
   */
  private sayElsewhere(failing: LogHandler, level: Level, id: string, msg: string, data: LogData): void {
    const entry: LogEntry = { timestamp: this.timestamp(), level, id, msg, ns: 'saas.logging', line: null, data, ctx: {} };
    const json = JSON.stringify(entry);
    for (const handler of this.handlers) {
      if (handler === failing || handler.failures?.failing) continue;
      try {
        if (handler.writeJson) handler.writeJson(json, entry, 'log');
        else handler.write(entry, 'log');
      } catch {
        // a notice is never worth a second failure
      }
    }
    if (failing.failures?.sink === 'console' || this.handlers.length === 1) writeStandardError(json + '\n');
  }

  /** A logger for a namespace; the project's own code uses `saas.<area>`. */
  logger(ns: string, kind: Kind = 'log'): Logger {
    return new Logger(this, ns, kind);
  }

  enabled(kind: Kind, ns: string, level: Level): boolean {
    return LEVEL_VALUE[level] >= this.filter.minLevel(kind, ns);
  }

  /** Emits one signal. `caller` is the function whose caller's line is recorded. */
  emit(kind: Kind, ns: string, level: Level, id: string, msg: string, data: LogData | undefined, options: EmitOptions | undefined, caller: LoggingCall): void {
    if (LEVEL_VALUE[level] < this.filter.minLevel(kind, ns)) return;
    const entry: LogEntry = {
      timestamp: this.timestamp(),
      level,
      id,
      // our messages may quote a path, a header or an error: the secrets in text go, as in data
      msg: mayHoldSecret(msg) ? redactText(msg) : msg,
      ns,
      line: this.lineOf(ns, level, id, caller),
      data: data ? (this.redact(typeof data.stack === 'string' ? { ...data, stack: sourceStack(data.stack) } : data) as Record<string, unknown>) : {},
      ctx: withTraceIds(options?.ctx ?? currentContext() ?? {}),
    };
    let json: string | undefined;
    for (const handler of this.handlers) {
      try {
        if (handler.writeJson) handler.writeJson((json ??= JSON.stringify(entry)), entry, kind);
        else handler.write(entry, kind);
      } catch (err) {
        // a broken handler must not take the request down with it, nor say so once per entry
        if (handler.failures) handler.failures.failed(String(err), 1);
        else if (!this.handlerFailureSaid) {
          this.handlerFailureSaid = true;
          writeStandardError(`log handler failed: ${String(err)} (said once)\n`);
        }
      }
    }
  }

  private timestamp(): string {
    const now = this.now();
    const ms = now.getTime();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTimestamp = now.toISOString();
    }
    return this.lastTimestamp;
  }

  private lineOf(ns: string, level: Level, id: string, caller: LoggingCall): number | null {
    let byId = signalLines.get(ns);
    if (!byId) signalLines.set(ns, (byId = new Map()));
    let byLevel = byId.get(id);
    if (!byLevel) byId.set(id, (byLevel = {}));
    let line = byLevel[level];
    if (line === undefined) {
      line = callerLine(caller);
      byLevel[level] = line;
    }
    return line;
  }

  async flush(): Promise<void> {
    await Promise.all(this.handlers.map((h) => h.flush?.()));
  }

  async close(): Promise<void> {
    await Promise.all(this.handlers.map((h) => h.close?.()));
  }
}

/** A namespace-bound logger: `log.info('account/signed-up', 'Account created', {id})`. */
export class Logger {
  constructor(
    private readonly backend: LogBackend,
    readonly ns: string,
    readonly kind: Kind,
  ) {}

  enabled(level: Level): boolean {
    return this.backend.enabled(this.kind, this.ns, level);
  }

  child(ns: string): Logger {
    return new Logger(this.backend, ns, this.kind);
  }

  trace(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'trace', id, msg, data, options, Logger.prototype.trace);
  }
  debug(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'debug', id, msg, data, options, Logger.prototype.debug);
  }
  info(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'info', id, msg, data, options, Logger.prototype.info);
  }
  warn(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'warn', id, msg, data, options, Logger.prototype.warn);
  }
  error(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'error', id, msg, data, options, Logger.prototype.error);
  }
  fatal(id: string, msg: string, data?: LogData, options?: EmitOptions): void {
    this.backend.emit(this.kind, this.ns, 'fatal', id, msg, data, options, Logger.prototype.fatal);
  }
}
