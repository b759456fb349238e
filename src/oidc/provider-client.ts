/**
 * What every sign-in provider client shares: the profile and checks it deals in, its errors, the
 * base class (requests in client spans, time-outs, http only for a loopback issuer), and how a
 * failure is described in a log entry and told apart from the provider being unreachable.
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
  constructor(
    readonly provider: string,
    message: string,
    options?: { cause?: unknown },
  ) {
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

export const TIMEOUT_SECONDS = 10;
const NAME_MAX = 100;

export const trimmedName = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim().slice(0, NAME_MAX) : null);
/** `email_verified` is a boolean in OpenID Connect; some providers send the string "true" */
export const isTrue = (value: unknown) => value === true || value === 'true';

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

export abstract class BaseClient implements ProviderClient {
  readonly id: string;
  readonly label: string;
  abstract readonly kind: OidcProviderKind;
  /** every request to the provider, in a client span when tracing is on */
  protected readonly fetch: client.CustomFetch;

  constructor(
    protected readonly settings: OidcProviderSettings,
    protected readonly log: Logger,
  ) {
    this.id = settings.id;
    this.label = settings.label;
    this.fetch = (url, options) => {
      const target = new URL(url);
      return withSpan(
        `oidc ${options.method}`,
        {
          'oidc.provider': settings.id,
          'http.request.method': options.method,
          'url.full': `${target.origin}${target.pathname}`,
        },
        () => fetch(url, options as RequestInit),
      );
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
