/**
 * What the product puts in front of the provider's mount (`/oauth`), which Fastify's route
 * pipeline does not reach: the API's security headers on every answer (the provider's pages
 * cannot be framed or sniffed), and the product's rate limits per client address, counted like
 * every other limit (Redis across instances): every `/oauth` request (`OAUTH_LIMIT_ADDRESS`), and
 * dynamic registrations apart (`OAUTH_REGISTRATION_LIMIT_ADDRESS`), since each stores a client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { HttpError } from '../http/errors.js';
import { addressKey, counter, take, type LimiterStore } from '../http/rate-limit.js';
import { apiSecurityHeaders } from '../http/security-headers.js';
import type { RateLimitSetting } from '../runtime/settings.js';

export interface MountLimits {
  requests: RateLimitSetting | null;
  registrations: RateLimitSetting | null;
}

export class MountGuard {
  private readonly headers: Array<[string, string]>;
  private readonly requests: RateLimiterAbstract | null;
  private readonly registrations: RateLimiterAbstract | null;

  constructor(limits: MountLimits, store: LimiterStore, https: boolean) {
    const headers = apiSecurityHeaders(https);
    // its caching is the provider's own (discovery is cacheable, tokens are not); its pages may
    // run the scripts it hashes into script-src (a form_post answer), nothing else
    delete headers['cache-control'];
    delete headers['cross-origin-resource-policy'];
    headers['content-security-policy'] = "default-src 'none'; script-src 'self'; base-uri 'none'; frame-ancestors 'none'";
    this.headers = Object.entries(headers);
    this.requests = counter('oauth-address', limits.requests, store);
    this.registrations = counter('oauth-registration', limits.registrations, store);
  }

  /**
   * Sets the headers, then takes the request's points: true to hand it to the provider, false
   * when it was answered (429, in the product's error shape).
   */
  async admit(req: IncomingMessage, res: ServerResponse, path: string, clientAddress: string): Promise<boolean> {
    for (const [name, value] of this.headers) res.setHeader(name, value);
    const key = addressKey(clientAddress);
    try {
      if (this.requests) await take(this.requests, key);
      // the provider's router takes any letter case and a trailing slash: so does the count
      if (this.registrations && req.method === 'POST' && path.toLowerCase().replace(/\/+$/, '') === '/oauth/reg') await take(this.registrations, key);
      return true;
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      res.statusCode = err.status;
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(JSON.stringify(err.body));
      return false;
    }
  }
}
