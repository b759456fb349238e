/**
 * Configuration: read once at start-up from the environment, validated, typed.
 * A bad value stops start-up with a message naming the variable; the dev, prod and
 * test profiles differ only in the values chosen here.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { billingSettings, type BillingSettings } from './billing/settings.js';
import { OidcConfigError, parseOidcProviders, type OidcProviderSettings } from './oidc/config.js';

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

/** Email delivery (src/mail/, docs/email.md). */
export interface MailSettings {
  /** `smtp://` or `smtps://` URL; undefined: the local mailbox (dev and test only) */
  url: string | undefined;
  /** the From header, e.g. `SaaS <no-reply@localhost>` */
  from: string;
  /** how often the worker looks for due messages, ms */
  pollMs: number;
  /** first retry delay, ms; doubled per attempt up to `retryMaxMs` */
  retryBaseMs: number;
  retryMaxMs: number;
  /** a message still not delivered this long after it was queued ends `failed`, ms */
  giveUpMs: number;
  /** how long a claimed message belongs to the instance sending it, ms */
  leaseMs: number;
}

export interface Config {
  env: AppEnv;
  version: string;
  port: number;
  host: string;
  mail: MailSettings;
  /** `postgres://...` for PostgreSQL, `memory://` for an in-memory PGlite, undefined for PGlite in `pgliteDir` */
  databaseUrl: string | undefined;
  /** PostgreSQL: where the session-revocation listener connects (a direct, session-mode connection); default databaseUrl */
  databaseListenUrl: string | undefined;
  pgliteDir: string;
  pgPoolMax: number;
  /** send parameterised queries as named prepared statements (PostgreSQL only) */
  pgPreparedStatements: boolean;
  /** serve the OpenAPI document and Swagger UI (`/openapi`); off hides the API's shape from the public */
  openapiDocs: boolean;
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
  /**
   * encrypts secrets kept in the database (TOTP secrets) and keys the backup codes' hashes;
   * ENCRYPTION_KEY, else derived from JWT_SECRET (docs/sign-in.md, "Keys")
   */
  encryptionKey: string;
  stripeWebhookSecrets: string[];
  /** Stripe Checkout, the customer portal and the plans (src/billing/, docs/billing.md) */
  billing: BillingSettings;
  redisUrl: string | undefined;
  logLevels: string;
  logFile: LogFileSettings | undefined;
  logConsole: ConsoleFormat;
  logRedactKeys: string[];
  bodyLimit: number;
  loginLimitEmail: RateLimitSetting | null;
  loginLimitAddress: RateLimitSetting | null;
  signupLimitAddress: RateLimitSetting | null;
  /** verification resends per account (RESEND_LIMIT_ACCOUNT) and per client address (RESEND_LIMIT_ADDRESS) */
  resendLimitAccount: RateLimitSetting | null;
  resendLimitAddress: RateLimitSetting | null;
  /** forgot-password requests per email (FORGOT_PASSWORD_LIMIT_EMAIL) and per client address (FORGOT_PASSWORD_LIMIT_ADDRESS) */
  forgotPasswordLimitEmail: RateLimitSetting | null;
  forgotPasswordLimitAddress: RateLimitSetting | null;
  /** wrong second-factor codes per account (MFA_LIMIT_ACCOUNT) and per client address (MFA_LIMIT_ADDRESS) */
  mfaLimitAccount: RateLimitSetting | null;
  mfaLimitAddress: RateLimitSetting | null;
  /** passkey sign-in ceremonies started per client address (PASSKEY_LIMIT_ADDRESS) */
  passkeyLimitAddress: RateLimitSetting | null;
  /** API key lookups that found no live key, per client address (API_KEY_LIMIT_ADDRESS) */
  apiKeyLimitAddress: RateLimitSetting | null;
  /** the app's public origin (`https://app.example.com`): links, and the Origin unsafe API requests may come from */
  appUrl: string;
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
  /** OpenID Connect / OAuth 2 sign-in providers (OIDC_PROVIDERS, src/oidc/); empty: none */
  oidcProviders: OidcProviderSettings[];
}

/** `METRICS_PORT` / `METRICS_HOST`: where `/metrics` is served, apart from the public port. */
export interface MetricsSettings {
  port: number;
  host: string;
}

/** The `OTEL_*` settings this project reads (docs/observability.md). */
export interface TracingSettings {
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318`; traces go to `<endpoint>/v1/traces` */
  endpoint: string;
  /** extra headers for the exporter (an API key of a hosted backend) */
  headers: Record<string, string>;
  serviceName: string;
  /** share of new traces recorded, 0..1; a continued trace follows its parent's decision */
  sampleRatio: number;
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

const PROXY_ADDRESS_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: unset, `false` or `0` = the socket's address; a hop count (`1`); or the proxies'
 * addresses / CIDRs, comma-separated. `true` is refused: it trusts every `X-Forwarded-For` entry,
 * so the left-most one, which the client writes itself, would become its address.
 */
export function parseTrustProxy(raw: string | undefined): false | number | string[] {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') {
    throw new ConfigError('TRUST_PROXY', 'must not be "true": that trusts every X-Forwarded-For entry, so any client could pick its own ' +
      'address (and escape the per-address limits). Give the number of proxies in front of the app (e.g. 1) or their addresses / CIDRs ' +
      '(e.g. 10.0.0.0/8); see docs/deployment.md');
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigError('TRUST_PROXY', `hop count must be between 0 and 10, got ${hops}`);
    return hops;
  }
  const entries = list(value);
  for (const entry of entries) {
    if (PROXY_ADDRESS_NAMES.has(entry)) continue;
    const [address, prefix, ...rest] = entry.split('/');
    const version = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (version === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError('TRUST_PROXY', `must be false, a hop count (e.g. 1) or comma-separated proxy addresses / CIDRs (e.g. 10.0.0.0/8), got "${entry}"`);
    }
  }
  return entries;
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

function mailSettings(env: Env, prod: boolean): MailSettings {
  const url = env.MAIL_URL?.trim() || undefined;
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || !parsed.hostname) {
      throw new ConfigError('MAIL_URL', 'must be smtp://user:pass@host:port or smtps://user:pass@host:port');
    }
  } else if (prod) {
    throw new ConfigError('MAIL_URL', 'is required when APP_ENV=prod (smtp://user:pass@host:port or smtps://...)');
  }
  const from = str(env, 'MAIL_FROM', 'SaaS <no-reply@localhost>').trim();
  if (!/^([^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from)) {
    throw new ConfigError('MAIL_FROM', `must be an address or "Name <address>", got "${from}"`);
  }
  const retryBaseMs = int(env, 'MAIL_RETRY_BASE_MS', 30_000, 1);
  return {
    url,
    from,
    pollMs: int(env, 'MAIL_POLL_MS', 1000, 10, 3_600_000),
    retryBaseMs,
    retryMaxMs: Math.max(retryBaseMs, int(env, 'MAIL_RETRY_MAX_MS', 3_600_000, 1)),
    giveUpMs: int(env, 'MAIL_GIVE_UP_MS', 86_400_000, 1),
    leaseMs: int(env, 'MAIL_LEASE_MS', 300_000, 100),
  };
}

function metricsSettings(env: Env, appHost: string, appPort: number): MetricsSettings | undefined {
  const raw = env.METRICS_PORT?.trim();
  if (!raw) return undefined;
  const port = int(env, 'METRICS_PORT', 0, 1, 65535);
  const host = str(env, 'METRICS_HOST', '127.0.0.1').trim();
  if (host !== 'localhost' && isIP(host) === 0) throw new ConfigError('METRICS_HOST', `must be an IP address or localhost, got "${host}"`);
  // the public listener would answer /metrics' port first, or the two would fight over it
  if (port === appPort && (host === appHost || appHost === '0.0.0.0' || appHost === '::')) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${appPort}): metrics are never served on the public listener`);
  }
  return { port, host };
}

function tracingSettings(env: Env): TracingSettings | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be an http(s) URL such as http://127.0.0.1:4318, got "${endpoint}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be an http(s) URL (OTLP over HTTP), got "${url.protocol}"`);
  }
  const headers: Record<string, string> = {};
  for (const pair of list(env.OTEL_EXPORTER_OTLP_HEADERS)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'must be comma-separated key=value pairs');
    headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  const ratioRaw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const sampleRatio = ratioRaw ? Number(ratioRaw) : 1;
  if (ratioRaw && !(/^(\d+\.?\d*|\.\d+)$/.test(ratioRaw) && sampleRatio <= 1)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (the share of traces recorded), got "${ratioRaw}"`);
  }
  return {
    endpoint: url.toString().replace(/\/+$/, ''),
    headers,
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'saas-app').trim(),
    sampleRatio,
  };
}

function oidcProviders(env: Env): OidcProviderSettings[] {
  try {
    return parseOidcProviders(env);
  } catch (err) {
    if (err instanceof OidcConfigError) throw new ConfigError(err.variable, err.message.slice(err.variable.length + 1));
    throw err;
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
  const databaseListenUrl = env.DATABASE_LISTEN_URL?.trim() || undefined;
  if (databaseListenUrl && !(/^postgres(ql)?:\/\//.test(databaseListenUrl) && databaseUrl?.startsWith('postgres'))) {
    throw new ConfigError('DATABASE_LISTEN_URL', 'must be a postgres:// URL, and is only used with a postgres:// DATABASE_URL');
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
  const encryptionKey = env.ENCRYPTION_KEY || `encryption:${jwtSecret}`;
  if (env.ENCRYPTION_KEY && env.ENCRYPTION_KEY.length < 32) throw new ConfigError('ENCRYPTION_KEY', 'must be at least 32 characters');

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

  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST', '127.0.0.1');
  // a wildcard listen address is no origin a browser could send
  const urlHost = host === '0.0.0.0' || host === '::' ? 'localhost' : isIP(host) === 6 ? `[${host}]` : host;
  const appUrl = parseOrigin('APP_URL', str(env, 'APP_URL', `http://${urlHost}:${port}`).trim());
  const allowedOrigins = list(env.ALLOWED_ORIGINS).map((origin) => parseOrigin('ALLOWED_ORIGINS', origin));

  return {
    env: appEnv,
    version: packageVersion(),
    port,
    host,
    mail: mailSettings(env, prod),
    databaseUrl,
    databaseListenUrl: databaseListenUrl ?? (databaseUrl?.startsWith('postgres') ? databaseUrl : undefined),
    pgliteDir: str(env, 'PGLITE_DIR', './data/pglite'),
    pgPoolMax: int(env, 'PG_POOL_MAX', 10, 1, 1000),
    pgPreparedStatements: oneOf(env, 'PG_PREPARED_STATEMENTS', ['on', 'off'] as const, 'on') === 'on',
    openapiDocs: oneOf(env, 'OPENAPI_DOCS', ['on', 'off'] as const, 'on') === 'on',
    jwtSecret,
    jwtSecretGenerated,
    jwtIssuer: str(env, 'JWT_ISSUER', 'saas-app'),
    jwtAudience: str(env, 'JWT_AUDIENCE', 'saas-app'),
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2_592_000, 1),
    refreshReuseGrace: int(env, 'REFRESH_REUSE_GRACE', 10, 0, 3600),
    sessionSecret,
    encryptionKey,
    stripeWebhookSecrets: list(env.STRIPE_WEBHOOK_SECRET),
    billing: billingSettings(env, (variable, problem) => new ConfigError(variable, problem)),
    redisUrl,
    logLevels: env.LOG_LEVELS ?? '',
    logFile,
    logConsole: oneOf(env, 'LOG_CONSOLE', ['pretty', 'json', 'off'] as const, appEnv === 'dev' ? 'pretty' : appEnv === 'prod' ? 'json' : 'off'),
    logRedactKeys: list(env.LOG_REDACT_KEYS),
    bodyLimit: int(env, 'BODY_LIMIT', 1_048_576, 1),
    loginLimitEmail: parseRateLimit('LOGIN_LIMIT_EMAIL', env.LOGIN_LIMIT_EMAIL, { count: 10, seconds: 900 }),
    loginLimitAddress: parseRateLimit('LOGIN_LIMIT_ADDRESS', env.LOGIN_LIMIT_ADDRESS, { count: 100, seconds: 900 }),
    signupLimitAddress: parseRateLimit('SIGNUP_LIMIT_ADDRESS', env.SIGNUP_LIMIT_ADDRESS, { count: 20, seconds: 3600 }),
    resendLimitAccount: parseRateLimit('RESEND_LIMIT_ACCOUNT', env.RESEND_LIMIT_ACCOUNT, { count: 5, seconds: 3600 }),
    resendLimitAddress: parseRateLimit('RESEND_LIMIT_ADDRESS', env.RESEND_LIMIT_ADDRESS, { count: 20, seconds: 3600 }),
    forgotPasswordLimitEmail: parseRateLimit('FORGOT_PASSWORD_LIMIT_EMAIL', env.FORGOT_PASSWORD_LIMIT_EMAIL, { count: 5, seconds: 3600 }),
    forgotPasswordLimitAddress: parseRateLimit('FORGOT_PASSWORD_LIMIT_ADDRESS', env.FORGOT_PASSWORD_LIMIT_ADDRESS, { count: 20, seconds: 3600 }),
    mfaLimitAccount: parseRateLimit('MFA_LIMIT_ACCOUNT', env.MFA_LIMIT_ACCOUNT, { count: 10, seconds: 900 }),
    mfaLimitAddress: parseRateLimit('MFA_LIMIT_ADDRESS', env.MFA_LIMIT_ADDRESS, { count: 100, seconds: 900 }),
    passkeyLimitAddress: parseRateLimit('PASSKEY_LIMIT_ADDRESS', env.PASSKEY_LIMIT_ADDRESS, { count: 60, seconds: 900 }),
    apiKeyLimitAddress: parseRateLimit('API_KEY_LIMIT_ADDRESS', env.API_KEY_LIMIT_ADDRESS, { count: 20, seconds: 60 }),
    appUrl,
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
    oidcProviders: oidcProviders(env),
  };
}
