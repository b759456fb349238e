/** Levels from most to least verbose. */
export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

export const LEVEL_VALUE: Readonly<Record<Level, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export function isLevel(value: string): value is Level {
  return (LEVELS as readonly string[]).includes(value);
}

/**
 * Signal kinds: `log` is emitted by the application's own code, `slf4j` by third-party
 * libraries (the name is the JVM logging facade's).
 */
export type Kind = 'log' | 'slf4j';
