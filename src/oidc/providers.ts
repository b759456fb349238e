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
 * GitHub is plain OAuth 2, in github.ts; what both kinds share is in provider-client.ts.
 */
import * as client from 'openid-client';
import type { Logger } from '../logging/logger.js';
import type { OidcProviderSettings } from './config.js';
import { GitHubClient } from './github.js';
import {
  BaseClient,
  describeError,
  isTrue,
  ProviderRefusedError,
  ProviderUnavailableError,
  TIMEOUT_SECONDS,
  trimmedName,
  type FlowChecks,
  type ProviderClient,
  type ProviderProfile,
} from './provider-client.js';

export {
  describeError,
  isUnavailable,
  ProviderRefusedError,
  ProviderUnavailableError,
  type FlowChecks,
  type ProviderClient,
  type ProviderProfile,
} from './provider-client.js';

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 60_000;
const OIDC_SCOPE = 'openid email profile';

class OidcClient extends BaseClient {
  readonly kind = 'oidc' as const;
  private configuration: client.Configuration | undefined;
  private discovering: Promise<client.Configuration> | undefined;
  private failures = 0;
  private retryAt = 0;

  /** The discovered configuration; the first call discovers, later ones reuse it (see the module comment). */
  private async config(): Promise<client.Configuration> {
    if (this.configuration) return this.configuration;
    if (this.discovering !== undefined) return this.discovering;
    const waitMs = this.retryAt - Date.now();
    if (waitMs > 0) {
      throw new ProviderUnavailableError(this.id, `Discovery of ${this.id} failed; the next attempt is in ${Math.ceil(waitMs / 1000)} s`);
    }
    this.discovering = this.discover().finally(() => {
      this.discovering = undefined;
    });
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
        provider: this.id,
        issuer,
        failures: this.failures,
        'retry-in-ms': backoffMs,
        ...describeError(err),
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
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
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
