/**
 * Configuration: read once at start-up from the environment, validated, typed.
 * A bad value stops start-up with a message naming the variable; the dev, prod and
 * test profiles differ only in the values chosen here.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type AppEnv = 'dev' | 'prod' | 'test';
export type RotationInterval = 'daily' | 'weekly' | 'monthly';
export type ConsoleFormat = 'pretty' | 'json' | 'off';

export interface RateLimitSetting {
  /** attempts allowed per window */
  count: number;
  /** window length in seconds */
  seconds: number;
}

export interface LogFileSettings {
  path: string;
  interval: RotationInterval;
  maxFileSize: number;
  maxNumParts: number;
  maxNumIntervals: number;
}

export interface Config {
  env: AppEnv;
  version: string;
  port: number;
  host: string;
  /** `postgres://...` for PostgreSQL, `memory://` for an in-memory PGlite, undefined for PGlite in `pgliteDir` */
  databaseUrl: string | undefined;
  pgliteDir: string;
  pgPoolMax: number;
  /** send parameterised queries as named prepared statements (PostgreSQL only) */
  pgPreparedStatements: boolean;
  jwtSecret: string;
  /** true when no JWT_SECRET was given and a random one was made (tokens die with the process) */
  jwtSecretGenerated: boolean;
  jwtIssuer: string;
  jwtAudience: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  refreshReuseGrace: number;
  /** signs the CSRF session cookie; derived from JWT_SECRET unless SESSION_SECRET is set */
  sessionSecret: string;
  stripeWebhookSecrets: string[];
  redisUrl: string | undefined;
  logLevels: string;
  logFile: LogFileSettings | undefined;
  logConsole: ConsoleFormat;
  logRedactKeys: string[];
  bodyLimit: number;
  loginLimitEmail: RateLimitSetting | null;
  loginLimitAddress: RateLimitSetting | null;
  publicDir: string;
  trustProxy: boolean | string;
  shutdownTimeoutMs: number;
  webConcurrency: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** SHUTDOWN_TIMEOUT in seconds (DESIGN.md); SHUTDOWN_TIMEOUT_MS, in ms, still works. */
function shutdownTimeoutMs(env: Env): number {
  const seconds = env.SHUTDOWN_TIMEOUT !== undefined && env.SHUTDOWN_TIMEOUT !== '';
  const ms = env.SHUTDOWN_TIMEOUT_MS !== undefined && env.SHUTDOWN_TIMEOUT_MS !== '';
  if (seconds && ms) throw new ConfigError('SHUTDOWN_TIMEOUT', 'is set together with SHUTDOWN_TIMEOUT_MS: set one (seconds, or milliseconds with _MS)');
  return ms ? int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0) : int(env, 'SHUTDOWN_TIMEOUT', 10, 0, 3600) * 1000;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
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

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Reads and validates the configuration. Throws {@link ConfigError} naming the bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const appEnv = oneOf(env, 'APP_ENV', ['dev', 'prod', 'test'] as const, 'dev');
  const prod = appEnv === 'prod';

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^(postgres(ql)?:\/\/|memory:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', `must be a postgres:// URL or memory://, got "${databaseUrl.replace(/:[^:@/]*@/, ':***@')}"`);
  }

  let jwtSecret = env.JWT_SECRET ?? '';
  let jwtSecretGenerated = false;
  if (!jwtSecret) {
    if (prod) throw new ConfigError('JWT_SECRET', 'is required when APP_ENV=prod (at least 32 characters)');
    jwtSecret = randomBytes(32).toString('base64url');
    jwtSecretGenerated = true;
  } else if (jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters (256 bits for HS256)');
  }
  const sessionSecret = env.SESSION_SECRET || `session:${jwtSecret}`;

  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');

  const logFilePath = env.LOG_FILE ?? (prod ? 'logs/saas-app.json' : '');
  const logFile: LogFileSettings | undefined = logFilePath && logFilePath !== 'off'
    ? {
        path: logFilePath,
        interval: oneOf(env, 'LOG_FILE_INTERVAL', ['daily', 'weekly', 'monthly'] as const, 'daily'),
        maxFileSize: int(env, 'LOG_FILE_MAX_SIZE', 104_857_600, 1),
        maxNumParts: int(env, 'LOG_FILE_MAX_PARTS', 10, 1),
        maxNumIntervals: int(env, 'LOG_FILE_MAX_INTERVALS', 30, 1),
      }
    : undefined;

  const trustRaw = env.TRUST_PROXY?.trim();
  const trustProxy = !trustRaw || trustRaw === 'false' ? false : trustRaw === 'true' ? true : trustRaw;

  return {
    env: appEnv,
    version: packageVersion(),
    port: int(env, 'PORT', 3000, 0, 65535),
    host: str(env, 'HOST', '127.0.0.1'),
    databaseUrl,
    pgliteDir: str(env, 'PGLITE_DIR', './data/pglite'),
    pgPoolMax: int(env, 'PG_POOL_MAX', 10, 1, 1000),
    pgPreparedStatements: oneOf(env, 'PG_PREPARED_STATEMENTS', ['on', 'off'] as const, 'on') === 'on',
    jwtSecret,
    jwtSecretGenerated,
    jwtIssuer: str(env, 'JWT_ISSUER', 'saas-app'),
    jwtAudience: str(env, 'JWT_AUDIENCE', 'saas-app'),
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2_592_000, 1),
    refreshReuseGrace: int(env, 'REFRESH_REUSE_GRACE', 10, 0, 3600),
    sessionSecret,
    stripeWebhookSecrets: list(env.STRIPE_WEBHOOK_SECRET),
    redisUrl,
    logLevels: env.LOG_LEVELS ?? '',
    logFile,
    logConsole: oneOf(env, 'LOG_CONSOLE', ['pretty', 'json', 'off'] as const, appEnv === 'dev' ? 'pretty' : appEnv === 'prod' ? 'json' : 'off'),
    logRedactKeys: list(env.LOG_REDACT_KEYS),
    bodyLimit: int(env, 'BODY_LIMIT', 1_048_576, 1),
    loginLimitEmail: parseRateLimit('LOGIN_LIMIT_EMAIL', env.LOGIN_LIMIT_EMAIL, { count: 10, seconds: 900 }),
    loginLimitAddress: parseRateLimit('LOGIN_LIMIT_ADDRESS', env.LOGIN_LIMIT_ADDRESS, { count: 100, seconds: 900 }),
    publicDir: str(env, 'PUBLIC_DIR', 'public'),
    trustProxy,
    shutdownTimeoutMs: shutdownTimeoutMs(env),
    webConcurrency: int(env, 'WEB_CONCURRENCY', 1, 1, 256),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100),
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100),
    // above the 60 s idle timeout of common load balancers, so they close first
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100),
    idleTimeoutMs: int(env, 'IDLE_TIMEOUT_MS', 120_000, 100),
  };
}
