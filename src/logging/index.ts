/** Builds the log backend from configuration: filter presets + overrides, handlers, redaction. */
import type { Config } from '../config.js';
import { ConsoleHandler } from './console-handler.js';
import { guardStandardStream } from './console-output.js';
import { RotatingFileHandler } from './file-handler.js';
import { LevelFilter, parseLevelOverrides, presetRules } from './filter.js';
import { LogBackend, type LogHandler } from './logger.js';
import { PrimaryFileHandler } from './primary-file-handler.js';
import { createRedactor, type Redactor } from './redact.js';

export interface Logging {
  backend: LogBackend;
  redact: Redactor;
}

export interface LoggingOptions {
  /** injectable clock for tests of rotation */
  clock?: () => Date;
  /** extra handlers (tests) */
  handlers?: LogHandler[];
  /** a cluster worker: the JSON file is the primary's, lines go there */
  clusterWorker?: boolean;
}

export function createLogging(config: Config, options: LoggingOptions = {}): Logging {
  let overrides: ReturnType<typeof parseLevelOverrides>;
  try {
    overrides = parseLevelOverrides(config.logLevels);
  } catch (err) {
    throw new Error(`Invalid configuration: ${(err as Error).message}`);
  }
  const filter = new LevelFilter([...presetRules(config.env), ...overrides]);
  // a standard error whose reader is gone must not turn a notice into an uncaught exception
  guardStandardStream(process.stderr);
  const handlers: LogHandler[] = [...(options.handlers ?? [])];
  if (config.logConsole !== 'off') handlers.push(new ConsoleHandler(config.logConsole));
  if (config.logFile) {
    handlers.push(options.clusterWorker ? new PrimaryFileHandler() : new RotatingFileHandler({ ...config.logFile, clock: options.clock }));
  }
  const redact = createRedactor(config.logRedactKeys);
  return { backend: new LogBackend(filter, handlers, redact, options.clock), redact };
}
