/**
 * The shared configuration: what every module needs (profile, address, database, secrets,
 * APP_URL and origins, body limit, logging, timeouts, observability), read once at start-up from
 * the environment and validated. Each module reads its own settings (`settings(env)` in its
 * module.ts). A bad value stops start-up with a message naming the variable; the dev, prod and
 * test profiles differ only in the values chosen here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseTrustProxy } from './http/trust-proxy.js';
import { metricsSettings, tracingSettings, type MetricsSettings, type TracingSettings } from './observability/settings.js';
import { ConfigError, int, list, oneOf, str, type Env } from './runtime/settings.js';
import { isLoopbackHost } from './shared/loopback.js';
import { LOCALES, type Locale } from './shared/locales.js';

export { ConfigError, type Env, type RateLimitSetting } from './runtime/settings.js';
export type { MetricsSettings, TracingSettings } from './observability/settings.js';

export type AppEnv = 'dev' | 'prod' | 'test';
export type RotationInterval = 'daily' | 'weekly' | 'monthly';
export type ConsoleFormat = 'pretty' | 'json' | 'off';

export interface LogFileSettings {
  path: string;
  interval: RotationInterval;
  maxFileSize: number;
  maxNumParts: number;
  maxNumIntervals: number;
}

export interface Config {
  env: AppEnv;
  /** the environment the configuration was read from: each module reads its own settings from it */
  vars: Env;
  version: string;
  port: number;
  host: string;
  /** `postgres://...` for PostgreSQL, `memory://` for an in-memory PGlite, undefined for PGlite in `pgliteDir` */
  databaseUrl: string | undefined;
  /** PostgreSQL: where the session-revocation listener connects (a direct, session-mode connection); default databaseUrl */
  databaseListenUrl: string | undefined;
  pgliteDir: string;
  pgPoolMax: number;
  /** DATABASE_TIMEOUT: ms a connection attempt or a statement may take before it fails (503); PostgreSQL */
  databaseTimeoutMs: number;
  /** DATABASE_CONNECT_TIMEOUT: ms start-up waits for an unreachable PostgreSQL before it gives up */
  databaseConnectTimeoutMs: number;
  /** send parameterised queries as named prepared statements (PostgreSQL only) */
  pgPreparedStatements: boolean;
  /** serve the OpenAPI document and Swagger UI (`/openapi`); off hides the API's shape from the public */
  openapiDocs: boolean;
  jwtSecret: string;
  /** true when no JWT_SECRET was given and a random one was made (tokens die with the process) */
  jwtSecretGenerated: boolean;
  /** dev on the PGlite directory without JWT_SECRET: the file the secret is kept in (see keptDevSecret) */
  jwtSecretFile: string | undefined;
  /** signs the CSRF session cookie; derived from JWT_SECRET unless SESSION_SECRET is set */
  sessionSecret: string;
  /** encrypts secrets kept in the database and keys hashes of codes; ENCRYPTION_KEY, else derived from JWT_SECRET */
  encryptionKey: string;
  redisUrl: string | undefined;
  logLevels: string;
  logFile: LogFileSettings | undefined;
  logConsole: ConsoleFormat;
  logRedactKeys: string[];
  bodyLimit: number;
  /** the app's public origin (`https://app.example.com`): links, and the Origin unsafe API requests may come from */
  appUrl: string;
  /** DEFAULT_LOCALE: the language of a reader who names none the product has, and of emails to an account without one */
  defaultLocale: Locale;
  /** every cookie of the product and of the OAuth provider is `Secure`: APP_URL is https */
  secureCookies: boolean;
  /** more origins (besides `appUrl`) whose unsafe API requests are accepted */
  allowedOrigins: string[];
  publicDir: string;
  /** false: the socket's address; a number: that many proxies in front; a list: the proxies' addresses / CIDRs */
  trustProxy: false | number | string[];
  shutdownTimeoutMs: number;
  /** SHUTDOWN_DELAY: ms of serving with readiness at 503 before the listener closes (default 0; 5 s in prod) */
  shutdownDelayMs: number;
  webConcurrency: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
  /** the Prometheus `/metrics` listener (src/observability/); undefined: off */
  metrics: MetricsSettings | undefined;
  /** OpenTelemetry traces (src/observability/tracing.ts); undefined: off */
  tracing: TracingSettings | undefined;
}

/** SHUTDOWN_TIMEOUT in seconds (docs/deployment.md, "Shutdown"); SHUTDOWN_TIMEOUT_MS, in ms, still works. */
function shutdownTimeoutMs(env: Env): number {
  const seconds = env.SHUTDOWN_TIMEOUT !== undefined && env.SHUTDOWN_TIMEOUT !== '';
  const ms = env.SHUTDOWN_TIMEOUT_MS !== undefined && env.SHUTDOWN_TIMEOUT_MS !== '';
  if (seconds && ms) throw new ConfigError('SHUTDOWN_TIMEOUT', 'is set together with SHUTDOWN_TIMEOUT_MS: set one (seconds, or milliseconds with _MS)');
  return ms ? int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0) : int(env, 'SHUTDOWN_TIMEOUT', 10, 0, 3600) * 1000;
}

/** An origin (`scheme://host[:port]`) from an http(s) URL with no path, query or fragment. */
function parseOrigin(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL such as https://app.example.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new ConfigError(name, `must be an http(s) URL without credentials, such as https://app.example.com, got "${raw}"`);
  }
  if (url.pathname !== '/' || url.search || url.hash) throw new ConfigError(name, `must be an origin only (no path, query or fragment), got "${raw}"`);
  return url.origin;
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
export function loadConfig(env: Env = { ...process.env }): Config {
  const appEnv = oneOf(env, 'APP_ENV', ['dev', 'prod', 'test'] as const, 'dev');
  const prod = appEnv === 'prod';

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^(postgres(ql)?:\/\/|memory:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', `must be a postgres:// URL or memory://, got "${databaseUrl.replace(/:[^:@/]*@/, ':***@')}"`);
  }
  const databaseListenUrl = env.DATABASE_LISTEN_URL?.trim() || undefined;
  if (databaseListenUrl && !(/^postgres(ql)?:\/\//.test(databaseListenUrl) && databaseUrl?.startsWith('postgres'))) {
    throw new ConfigError('DATABASE_LISTEN_URL', 'must be a postgres:// URL, and is only used with a postgres:// DATABASE_URL');
  }

  const pgliteDir = str(env, 'PGLITE_DIR', './data/pglite');
  let jwtSecret = env.JWT_SECRET ?? '';
  let jwtSecretGenerated = false;
  let jwtSecretFile: string | undefined;
  if (!jwtSecret) {
    if (prod) throw new ConfigError('JWT_SECRET', 'is required when APP_ENV=prod (at least 32 characters)');
    if (appEnv === 'dev' && databaseUrl === undefined) {
      jwtSecretFile = devSecretFileOf(pgliteDir);
      jwtSecret = keptDevSecret(jwtSecretFile);
    } else {
      jwtSecret = randomBytes(32).toString('base64url');
      jwtSecretGenerated = true;
    }
  } else if (jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters (256 bits for HS256)');
  }
  const sessionSecret = env.SESSION_SECRET || `session:${jwtSecret}`;
  const encryptionKey = env.ENCRYPTION_KEY || `encryption:${jwtSecret}`;
  if (env.ENCRYPTION_KEY && env.ENCRYPTION_KEY.length < 32) throw new ConfigError('ENCRYPTION_KEY', 'must be at least 32 characters');

  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');

  const logFilePath = env.LOG_FILE ?? (prod ? 'logs/saas-app.json' : '');
  const logFile: LogFileSettings | undefined =
    logFilePath && logFilePath !== 'off'
      ? {
          path: logFilePath,
          interval: oneOf(env, 'LOG_FILE_INTERVAL', ['daily', 'weekly', 'monthly'] as const, 'daily'),
          maxFileSize: int(env, 'LOG_FILE_MAX_SIZE', 104_857_600, 1),
          maxNumParts: int(env, 'LOG_FILE_MAX_PARTS', 10, 1),
          maxNumIntervals: int(env, 'LOG_FILE_MAX_INTERVALS', 30, 1),
        }
      : undefined;

  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST', '127.0.0.1');
  // a wildcard listen address is no origin a browser could send
  const urlHost = host === '0.0.0.0' || host === '::' ? 'localhost' : isIP(host) === 6 ? `[${host}]` : host;
  const appUrl = parseOrigin('APP_URL', str(env, 'APP_URL', `http://${urlHost}:${port}`).trim());
  // a Secure cookie over plain http is refused (koa, browsers off loopback): prod on http is only for one's own machine
  if (prod && appUrl.startsWith('http:') && !isLoopbackHost(new URL(appUrl).hostname))
    throw new ConfigError('APP_URL', `must be https when APP_ENV=prod (http only on a loopback address such as 127.0.0.1), got "${appUrl}"`);
  const allowedOrigins = list(env.ALLOWED_ORIGINS).map((origin) => parseOrigin('ALLOWED_ORIGINS', origin));

  return {
    env: appEnv,
    vars: env,
    version: packageVersion(),
    port,
    host,
    databaseUrl,
    databaseListenUrl: databaseListenUrl ?? (databaseUrl?.startsWith('postgres') ? databaseUrl : undefined),
    pgliteDir,
    pgPoolMax: int(env, 'PG_POOL_MAX', 10, 1, 1000),
    databaseTimeoutMs: int(env, 'DATABASE_TIMEOUT', 5, 1, 10) * 1000,
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT', 30, 0, 3600) * 1000,
    pgPreparedStatements: oneOf(env, 'PG_PREPARED_STATEMENTS', ['on', 'off'] as const, 'on') === 'on',
    openapiDocs: oneOf(env, 'OPENAPI_DOCS', ['on', 'off'] as const, 'on') === 'on',
    jwtSecret,
    jwtSecretFile,
    jwtSecretGenerated,
    sessionSecret,
    encryptionKey,
    redisUrl,
    logLevels: env.LOG_LEVELS ?? '',
    logFile,
    logConsole: oneOf(env, 'LOG_CONSOLE', ['pretty', 'json', 'off'] as const, appEnv === 'dev' ? 'pretty' : appEnv === 'prod' ? 'json' : 'off'),
    logRedactKeys: list(env.LOG_REDACT_KEYS),
    bodyLimit: int(env, 'BODY_LIMIT', 1_048_576, 1),
    appUrl,
    defaultLocale: oneOf(env, 'DEFAULT_LOCALE', LOCALES, 'en'),
    secureCookies: appUrl.startsWith('https:'),
    allowedOrigins,
    publicDir: str(env, 'PUBLIC_DIR', 'public'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    shutdownTimeoutMs: shutdownTimeoutMs(env),
    shutdownDelayMs: int(env, 'SHUTDOWN_DELAY', appEnv === 'prod' ? 5 : 0, 0, 300) * 1000,
    webConcurrency: int(env, 'WEB_CONCURRENCY', 1, 1, 256),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100),
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100),
    // above the 60 s idle timeout of common load balancers, so they close first
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100),
    idleTimeoutMs: int(env, 'IDLE_TIMEOUT_MS', 120_000, 100),
    metrics: metricsSettings(env, host, port),
    tracing: tracingSettings(env),
  };
}

/** Where a development secret is kept: beside the PGlite directory (`./data/dev-jwt-secret` by default), never inside it. */
export function devSecretFileOf(pgliteDir: string): string {
  return join(dirname(resolve(pgliteDir)), 'dev-jwt-secret');
}

/**
 * Without JWT_SECRET in dev on the PGlite directory (`npm start`, `npm run dev`): one random secret, made at the first
 * start and read at every later one. A new secret at each start would end every session, and
 * everything encrypted with the key derived from it (two-factor secrets, webhook signing secrets)
 * could no longer be read: a two-factor account could not log in after `npm run dev` restarted.
 */
function keptDevSecret(file: string): string {
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 32) return kept;
    throw new ConfigError('JWT_SECRET', `is not set, and the development secret in ${file} is shorter than 32 characters: delete the file to make a new one`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    // two starts at once: the other one wrote it first
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
}
