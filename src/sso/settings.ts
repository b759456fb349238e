/**
 * The sso module's settings (docs/sso.md, "Settings"): DNS_SERVERS (the resolver domain
 * verification asks instead of the system's) and how often expiring IdP certificates are checked.
 */
import { isIP } from 'node:net';
import { ConfigError, int, list, rateLimit, type Env, type RateLimitSetting } from '../runtime/settings.js';

export interface SsoSettings {
  /** `ip[:port]` of DNS servers for TXT lookups; empty: node's resolver (the system's servers) */
  dnsServers: string[];
  /** how often the certificate expiry check runs, ms (daily) */
  expiryCheckMs: number;
  /** how long an AuthnRequest waits for its answer, ms */
  requestTtlMs: number;
  /** SSO_START_LIMIT_ADDRESS: sign-ons started per client address (each stores a request) */
  startLimit: RateLimitSetting | null;
  /** SSO_ACS_LIMIT_ADDRESS: responses posted to the ACS per client address */
  acsAddressLimit: RateLimitSetting | null;
  /** SSO_ACS_LIMIT_REQUEST: responses posted naming one request id (a refused post leaves the request live) */
  acsRequestLimit: RateLimitSetting | null;
}

function dnsServers(env: Env): string[] {
  const servers = list(env.DNS_SERVERS);
  for (const server of servers) {
    const m = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(server);
    const ip = m && (isIP(m[1]) ? m[1] : isIP(server) ? server : '');
    if (!ip) throw new ConfigError('DNS_SERVERS', `must list IP addresses with an optional :port (host:port,…), got "${server}"`);
  }
  return servers;
}

export function ssoSettings(env: Env): SsoSettings {
  return {
    dnsServers: dnsServers(env),
    expiryCheckMs: int(env, 'SSO_CERT_CHECK_SECONDS', 86_400, 1, 7 * 86_400) * 1000,
    requestTtlMs: int(env, 'SAML_REQUEST_TTL', 600, 30, 3600) * 1000,
    startLimit: rateLimit(env, 'SSO_START_LIMIT_ADDRESS', { count: 60, seconds: 900 }),
    // a sign-on posts once (a person may retry a few times); an office behind one address signs many in
    acsAddressLimit: rateLimit(env, 'SSO_ACS_LIMIT_ADDRESS', { count: 120, seconds: 900 }),
    acsRequestLimit: rateLimit(env, 'SSO_ACS_LIMIT_REQUEST', { count: 5, seconds: 600 }),
  };
}
