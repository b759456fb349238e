/**
 * GitHub as a sign-in provider: plain OAuth 2 (no discovery, no ID token). The endpoints are
 * preset from the base URL (github.com, or a GitHub Enterprise Server), and the person comes from
 * its REST API: `/user` for the stable numeric id, `/user/emails` for the verified primary address.
 */
import * as client from 'openid-client';
import type { Logger } from '../logging/logger.js';
import type { OidcProviderSettings } from './config.js';
import { BaseClient, ProviderRefusedError, ProviderUnavailableError, trimmedName, type FlowChecks, type ProviderProfile } from './provider-client.js';

const GITHUB_SCOPE = 'read:user user:email';

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

export class GitHubClient extends BaseClient {
  readonly kind = 'github' as const;
  private readonly configuration: client.Configuration;
  private readonly apiBase: string;

  constructor(settings: OidcProviderSettings, log: Logger) {
    super(settings, log);
    const base = settings.issuer;
    this.configuration = this.prepare(
      new client.Configuration(
        {
          issuer: base,
          authorization_endpoint: `${base}/login/oauth/authorize`,
          token_endpoint: `${base}/login/oauth/access_token`,
        },
        settings.clientId,
        settings.clientSecret,
        client.ClientSecretPost(settings.clientSecret),
      ),
    );
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
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
    });
    const user = await this.api<GitHubUser>(tokens.access_token, '/user');
    // the numeric id: a login can be renamed and then taken by someone else
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new ProviderRefusedError("GitHub's /user has no id");
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
