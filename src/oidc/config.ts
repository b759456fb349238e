/**
 * The sign-in providers from the environment (docs/oidc.md, "Configuration"):
 *
 *   OIDC_PROVIDERS=google,github,acme
 *   OIDC_<NAME>_ISSUER         the issuer; discovered at `<issuer>/.well-known/openid-configuration`
 *                              (preset for `google`; for `github`, the GitHub base URL, preset too)
 *   OIDC_<NAME>_CLIENT_ID      the client registered for this app at the provider
 *   OIDC_<NAME>_CLIENT_SECRET
 *   OIDC_<NAME>_LABEL          optional: the button's text (default: Google, GitHub, or the name)
 *
 * `<NAME>` is the name upper-cased, `-` as `_`. The redirect URI to register at the provider is
 * `APP_URL/api/auth/oauth/<name>/callback`. Read by config.ts; a bad value stops start-up with a
 * message naming the variable.
 */
import { ConfigError, type Env } from '../runtime/settings.js';
import { isLoopbackHost } from '../shared/loopback.js';

/** `oidc`: discovery and an ID token; `github`: plain OAuth 2 with GitHub's endpoints and API. */
export type OidcProviderKind = 'oidc' | 'github';

export interface OidcProviderSettings {
  /** the name in OIDC_PROVIDERS, lower-case: the path segment and the identity's `provider` */
  id: string;
  /** the button's text */
  label: string;
  kind: OidcProviderKind;
  /** the issuer (oidc) or the GitHub base URL (github), without a trailing slash */
  issuer: string;
  clientId: string;
  clientSecret: string;
}

const NAME = /^[a-z][a-z0-9-]{0,31}$/;

const PRESETS: Record<string, { kind: OidcProviderKind; issuer: string; label: string }> = {
  google: { kind: 'oidc', issuer: 'https://accounts.google.com', label: 'Google' },
  github: { kind: 'github', issuer: 'https://github.com', label: 'GitHub' },
};

export const envPrefix = (id: string) => `OIDC_${id.toUpperCase().replace(/-/g, '_')}_`;

/**
 * An issuer: https, or http on a loopback address (a provider run locally, in development and
 * tests); no query or fragment (OpenID Connect Discovery forbids them).
 */
function parseIssuer(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, `must be the provider's issuer URL, such as https://accounts.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError(variable, `must be an https URL (http only on a loopback address such as 127.0.0.1), got "${raw}"`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(variable, `must have no query, fragment or credentials, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

function required(env: Env, variable: string, provider: string): string {
  const value = env[variable]?.trim();
  if (!value) throw new ConfigError(variable, `is required for the sign-in provider "${provider}" named in OIDC_PROVIDERS`);
  return value;
}

/** The providers OIDC_PROVIDERS names, validated; empty when it is unset. */
export function parseOidcProviders(env: Env): OidcProviderSettings[] {
  const names = (env.OIDC_PROVIDERS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const seen = new Set<string>();
  return names.map((id) => {
    if (!NAME.test(id)) {
      throw new ConfigError('OIDC_PROVIDERS', `names must be lower-case letters, digits and "-", starting with a letter (at most 32), got "${id}"`);
    }
    if (seen.has(id)) throw new ConfigError('OIDC_PROVIDERS', `names "${id}" twice`);
    seen.add(id);
    const prefix = envPrefix(id);
    const preset = PRESETS[id];
    const rawIssuer = env[`${prefix}ISSUER`]?.trim();
    if (!rawIssuer && !preset) {
      throw new ConfigError(`${prefix}ISSUER`, `is required for the sign-in provider "${id}" named in OIDC_PROVIDERS (only google and github have a preset)`);
    }
    return {
      id,
      label: env[`${prefix}LABEL`]?.trim() || preset?.label || id.charAt(0).toUpperCase() + id.slice(1),
      kind: preset?.kind ?? 'oidc',
      issuer: parseIssuer(`${prefix}ISSUER`, rawIssuer || preset!.issuer),
      clientId: required(env, `${prefix}CLIENT_ID`, id),
      clientSecret: required(env, `${prefix}CLIENT_SECRET`, id),
    };
  });
}
