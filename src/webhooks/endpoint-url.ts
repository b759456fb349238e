/**
 * The URL a webhook endpoint may have, checked when an admin makes or changes one: an absolute
 * http(s) URL (https in prod) whose host resolves, in time, to addresses the SSRF rules of
 * address-guard.ts allow; every refusal a 400 naming `/url`.
 */
import { requestCoercion } from '../http/errors.js';
import { AddressNotAllowed, allowedAddresses, bareHost, HostNotFound, type AddressRefusal, type HostResolver } from './address-guard.js';

export interface EndpointUrlRules {
  resolve: HostResolver;
  allowPrivate: boolean;
  requireHttps: boolean;
  /** how long resolving a URL's host may take at creation (WEBHOOK_TIMEOUT) */
  resolveTimeoutMs: number;
}

const REFUSALS: Record<AddressRefusal, string> = {
  'link-local': 'must not point to a link-local address (169.254.0.0/16, fe80::/10, cloud metadata services)',
  private: 'must not point to a loopback, private, unique-local or unspecified address',
  'not-routable': 'must point to a public unicast address',
};

/**
 * The URL, normalized; a 400 naming `field` (default `/url`) otherwise: not an absolute
 * http(s) URL, http in prod, credentials or a fragment in it, a host that does not resolve,
 * or one that is or resolves to an address the SSRF rules refuse (address-guard.ts).
 */
export async function checkEndpointUrl(raw: string, rules: EndpointUrlRules, field = '/url'): Promise<string> {
  const refuse = (message: string) => requestCoercion('body', [{ path: field, message }]);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw refuse('must be an absolute URL such as https://example.com/webhooks');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an http(s) URL');
  if (rules.requireHttps && url.protocol !== 'https:') throw refuse('must be https');
  if (url.username || url.password) throw refuse('must not carry credentials (user:password@)');
  if (url.hash) throw refuse('must not have a fragment (#...)');
  if (!url.hostname) throw refuse('must name a host');
  let timer: NodeJS.Timeout | undefined;
  try {
    // getaddrinfo has no timeout of its own: a name server that never answers must not hold the request
    const slow = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('resolution timed out')), rules.resolveTimeoutMs);
    });
    await Promise.race([allowedAddresses(bareHost(url), rules.resolve, rules.allowPrivate), slow]);
  } catch (err) {
    if (err instanceof AddressNotAllowed) throw refuse(REFUSALS[err.refusal]);
    if (err instanceof HostNotFound) throw refuse(`names a host that does not resolve (${url.hostname})`);
    throw refuse('names a host that could not be resolved now; try again');
  } finally {
    clearTimeout(timer);
  }
  const href = url.href;
  if (href.length > 2000) throw refuse('must be at most 2000 characters');
  return href;
}
