/**
 * The configured sign-in providers as clients (openid-client): the authorization URL of a
 * sign-in, and the person the callback's code stands for.
 *
 * Discovery is lazy: a provider's metadata is fetched at its first use (a warm-up starts it in
 * the background at start-up, without waiting) and kept for the process's life. A provider that
 * is down does not stop the server from starting; its sign-ins answer "unavailable" while
 * discovery fails, and discovery is tried again at most once per back-off (1 s, doubling to
 * 60 s), so a down provider is not hammered and a user gets the answer at once. Concurrent first
 * uses share one discovery. Signing keys (JWKS) are fetched and rotated by the library.
 *
 * GitHub is plain OAuth 2: no discovery and no ID token; its endpoints are preset from the
 * base URL (github.com, or a GitHub Enterprise Server), and the person comes from its REST API
 * (`/user` for the stable numeric id, `/user/emails` for the verified primary address).
 */
import * as client from 'openid-client';
import type { Logger } from '../logging/logger.js';
import { withSpan } from '../observability/spans.js';
import type { OidcProviderKind, OidcProviderSettings } from './config.js';

/** What the provider says about the person signing in. */
export interface ProviderProfile {
  /** the provider's stable id of the person (`sub`; GitHub: the numeric user id) */
  subject: string;
  /** lower-cased; null when the provider gave none */
  email: string | null;
  /** the provider asserts that the person controls `email` */
  emailVerified: boolean;
  name: string | null;
}

/** The flow's secrets, made at the start and checked at the callback. */
export interface FlowChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider cannot be reached (discovery, a network error, a time-out or a 5xx). */
export class ProviderUnavailableError extends Error {
  constructor(readonly provider: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderUnavailableError';
  }
}

/** The provider answered, but not what a sign-in needs (an API error, a response without what it must carry). */
export class ProviderRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderRefusedError';
  }
}

const TIMEOUT_SECONDS = 10;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 60_000;
const OIDC_SCOPE = 'openid email profile';
const GITHUB_SCOPE = 'read:user user:email';
const NAME_MAX = 100;

const trimmedName = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim().slice(0, NAME_MAX) : null);
/** `email_verified` is a boolean in OpenID Connect; some providers send the string "true" */
const isTrue = (value: unknown) => value === true || value === 'true';

export interface ProviderClient {
  readonly id: string;
  readonly label: string;
  readonly kind: OidcProviderKind;
  /** The provider's authorization URL for a sign-in with these checks; throws {@link ProviderUnavailableError}. */
  authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL>;
  /**
   * Exchanges the code of the callback (`callbackUrl`: the redirect URI with the callback's
   * query) with the PKCE verifier, checks state, and for OpenID Connect the ID token (signature,
   * issuer, audience, expiry, nonce), and returns who signed in.
   */
  profile(callbackUrl: URL, checks: FlowChecks): Promise<ProviderProfile>;
  /** Starts discovery in the background (start-up); failures are logged and retried later. */
  warmUp(): void;
}

abstract class BaseClient implements ProviderClient {
  readonly id: string;
  readonly label: string;
  abstract readonly kind: OidcProviderKind;
  /** every request to the provider, in a client span when tracing is on */
  protected readonly fetch: client.CustomFetch;

  constructor(protected readonly settings: OidcProviderSettings, protected readonly log: Logger) {
    this.id = settings.id;
    this.label = settings.label;
    this.fetch = (url, options) => {
      const target = new URL(url);
      return withSpan(`oidc ${options.method}`, {
        'oidc.provider': settings.id, 'http.request.method': options.method, 'url.full': `${target.origin}${target.pathname}`,
      }, () => fetch(url, options as RequestInit));
    };
  }

  protected prepare(config: client.Configuration): client.Configuration {
    config[client.customFetch] = this.fetch;
    config.timeout = TIMEOUT_SECONDS;
    // http is accepted only for an issuer on a loopback address (config.ts)
    if (this.settings.issuer.startsWith('http:')) client.allowInsecureRequests(config);
    return config;
  }

  abstract authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL>;
  abstract profile(callbackUrl: URL, checks: FlowChecks): Promise<ProviderProfile>;
  warmUp(): void {}
}

class OidcClient extends BaseClient {
  readonly kind = 'oidc' as const;
  private configuration: client.Configuration | undefined;
  private discovering: Promise<client.Configuration> | undefined;
  private failures = 0;
  private retryAt = 0;

  /** The discovered configuration; the first call discovers, later ones reuse it (see the module comment). */
  private async config(): Promise<client.Configuration> {
    if (this.configuration) return this.configuration;
    if (this.discovering) return this.discovering;
    const waitMs = this.retryAt - Date.now();
    if (waitMs > 0) {
      throw new ProviderUnavailableError(this.id, `Discovery of ${this.id} failed; the next attempt is in ${Math.ceil(waitMs / 1000)} s`);
    }
    this.discovering = this.discover().finally(() => { this.discovering = undefined; });
    return this.discovering;
  }

  private async discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    try {
      // client_secret_basic: the method OpenID Connect assumes for a client registered with a secret
      const discovered = await client.discovery(new URL(issuer), clientId, undefined, client.ClientSecretBasic(clientSecret), {
        [client.customFetch]: this.fetch,
        timeout: TIMEOUT_SECONDS,
        execute: issuer.startsWith('http:') ? [client.allowInsecureRequests] : [],
      });
      this.configuration = this.prepare(discovered);
      this.failures = 0;
      this.retryAt = 0;
      this.log.info('oidc/discovered', `Discovered the sign-in provider ${this.id}`, { provider: this.id, issuer });
      return this.configuration;
    } catch (err) {
      this.failures++;
      const backoffMs = Math.min(RETRY_BASE_MS * 2 ** (this.failures - 1), RETRY_MAX_MS);
      this.retryAt = Date.now() + backoffMs;
      this.log.warn('oidc/discovery-failed', `Discovery of the sign-in provider ${this.id} failed; retrying at the next sign-in after ${backoffMs} ms`, {
        provider: this.id, issuer, failures: this.failures, 'retry-in-ms': backoffMs, ...describeError(err),
      });
      throw new ProviderUnavailableError(this.id, `The sign-in provider ${this.id} cannot be reached`, { cause: err });
    }
  }

  override warmUp(): void {
    this.config().catch(() => undefined);
  }

  async authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL> {
    return client.buildAuthorizationUrl(await this.config(), {
      redirect_uri: redirectUri,
      scope: OIDC_SCOPE,
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  async profile(callbackUrl: URL, checks: FlowChecks): Promise<ProviderProfile> {
    const config = await this.config();
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new ProviderRefusedError('The token response has no ID token');
    let { email, email_verified: emailVerified, name } = claims;
    // many providers keep the email claims for the UserInfo endpoint (the access token's scope)
    if ((typeof email !== 'string' || emailVerified === undefined) && config.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = typeof email === 'string' ? email : info.email;
      emailVerified = emailVerified ?? info.email_verified;
      name = name ?? info.name;
    }
    return {
      subject: claims.sub,
      email: typeof email === 'string' && email.includes('@') ? email.trim().toLowerCase() : null,
      emailVerified: isTrue(emailVerified),
      name: trimmedName(name),
    };
  }
}

interface GitHubUser {
  id?: unknown;
  login?: unknown;
  name?: unknown;
}

interface GitHubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

class GitHubClient extends BaseClient {
  readonly kind = 'github' as const;
  private readonly configuration: client.Configuration;
  private readonly apiBase: string;

  constructor(settings: OidcProviderSettings, log: Logger) {
    super(settings, log);
    const base = settings.issuer;
    this.configuration = this.prepare(new client.Configuration({
      issuer: base,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
    }, settings.clientId, settings.clientSecret, client.ClientSecretPost(settings.clientSecret)));
    // github.com's API has a host of its own; GitHub Enterprise Server serves it under /api/v3
    this.apiBase = new URL(base).hostname === 'github.com' ? 'https://api.github.com' : `${base}/api/v3`;
  }

  async authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL> {
    return client.buildAuthorizationUrl(this.configuration, {
      redirect_uri: redirectUri,
      scope: GITHUB_SCOPE,
      state: checks.state,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  private async api<T>(accessToken: string, path: string): Promise<T> {
    const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'saas-starter' });
    const response = await client.fetchProtectedResource(this.configuration, accessToken, new URL(`${this.apiBase}${path}`), 'GET', undefined, headers);
    if (response.status >= 500) throw new ProviderUnavailableError(this.id, `GitHub's API answered ${response.status} for ${path}`);
    if (!response.ok) throw new ProviderRefusedError(`GitHub's API answered ${response.status} for ${path}`);
    return (await response.json()) as T;
  }

  async profile(callbackUrl: URL, checks: FlowChecks): Promise<ProviderProfile> {
    const tokens = await client.authorizationCodeGrant(this.configuration, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state,
    });
    const user = await this.api<GitHubUser>(tokens.access_token, '/user');
    // the numeric id: a login can be renamed and then taken by someone else
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new ProviderRefusedError('GitHub\'s /user has no id');
    const emails = await this.api<GitHubEmail[]>(tokens.access_token, '/user/emails');
    const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true && typeof e.email === 'string') : undefined;
    return {
      subject: String(user.id),
      email: primary ? (primary.email as string).trim().toLowerCase() : null,
      emailVerified: primary?.verified === true,
      name: trimmedName(user.name) ?? trimmedName(user.login),
    };
  }
}

/** The configured providers by name. */
export class ProviderClients {
  private readonly clients = new Map<string, ProviderClient>();

  constructor(settings: readonly OidcProviderSettings[], log: Logger) {
    for (const s of settings) this.clients.set(s.id, s.kind === 'github' ? new GitHubClient(s, log) : new OidcClient(s, log));
  }

  /** In OIDC_PROVIDERS order, for the client's buttons. */
  list(): Array<{ id: string; name: string }> {
    return [...this.clients.values()].map((c) => ({ id: c.id, name: c.label }));
  }

  get(id: string): ProviderClient | undefined {
    return this.clients.get(id);
  }

  /** Starts every provider's discovery in the background; start-up does not wait for it. */
  warmUp(): void {
    for (const c of this.clients.values()) c.warmUp();
  }
}

/**
 * An error's facts for a log entry, never a secret: class, code, the message (oauth4webapi's
 * messages name the failed check, not the values), the provider's `error` and
 * `error_description`, and the HTTP status of a failed response.
 */
export function describeError(err: unknown): Record<string, string | number> {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; error?: unknown; error_description?: unknown; status?: unknown; cause?: unknown };
  const out: Record<string, string | number> = {};
  if (typeof e?.name === 'string') out.class = e.name;
  if (typeof e?.code === 'string') out.check = e.code;
  if (typeof e?.message === 'string') out.reason = e.message.slice(0, 300);
  if (typeof e?.error === 'string') out['oauth-error'] = e.error.slice(0, 100);
  if (typeof e?.error_description === 'string') out.description = e.error_description.slice(0, 300);
  if (typeof e?.status === 'number') out.status = e.status;
  const cause = e?.cause as { message?: unknown; status?: unknown } | undefined;
  if (cause instanceof Error && typeof cause.message === 'string') out['cause-reason'] = cause.message.slice(0, 300);
  if (cause instanceof Response) out.status = cause.status;
  return out;
}

/** Whether a failure is the provider being unreachable (network, time-out, 5xx), not a refused sign-in. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof ProviderUnavailableError) return true;
  // fetch's network failures are TypeErrors ("fetch failed", the socket's error as the cause),
  // which the library rethrows as they are; a TypeError of a bug is not one
  if (err instanceof TypeError) return err.message === 'fetch failed' || typeof (err.cause as { code?: unknown } | undefined)?.code === 'string';
  const e = err as { code?: unknown; status?: unknown; cause?: unknown };
  if (e.code === 'OAUTH_TIMEOUT' || e.code === 'OAUTH_ABORT') return true;
  if (typeof e.status === 'number' && e.status >= 500) return true;
  return e.cause instanceof Response && e.cause.status >= 500;
}
