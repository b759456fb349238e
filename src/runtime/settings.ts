/**
 * Reading settings from the environment: the shared configuration (config.ts) and every
 * module's own settings (`settings(env)` in `src/<concern>/module.ts`) use these, so a bad value
 * stops start-up with the same kind of message naming the variable.
 */

/** The environment a configuration is read from (`process.env`, or a test's object). */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export interface RateLimitSetting {
  /** attempts allowed per window */
  count: number;
  /** window length in seconds */
  seconds: number;
}

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().replace(/^:/, '') as T;
  if (!allowed.includes(v)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return v;
}

/** `<count>/<seconds>`, or `0` to turn the limit off. */
export function parseRateLimit(name: string, raw: string | undefined, fallback: RateLimitSetting): RateLimitSetting | null {
  if (raw === undefined || raw === '') return fallback;
  if (raw.trim() === '0') return null;
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
    throw new ConfigError(name, `must be "<count>/<seconds>" (e.g. 10/900) or 0, got "${raw}"`);
  }
  return { count: Number(m[1]), seconds: Number(m[2]) };
}

/** A rate limit read from the variable `name` (see {@link parseRateLimit}). */
export function rateLimit(env: Env, name: string, fallback: RateLimitSetting): RateLimitSetting | null {
  return parseRateLimit(name, env[name], fallback);
}

export function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
