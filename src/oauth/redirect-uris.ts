/** Where an OAuth client may have its answers sent: one rule for organizations' apps and registered clients. */
import { msg } from '../i18n/messages.js';
import { isLoopbackHost } from '../shared/loopback.js';

/** RFC 8252 and OAuth 2.1's rule: `https`, or `http` on a loopback address; absolute, no fragment. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return msg('must be an absolute URL');
  }
  if (uri.includes('#')) return msg('must not have a fragment');
  if (url.username || url.password) return msg('must not carry credentials');
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return msg('must use https, or http on a loopback address (localhost, 127.0.0.1, [::1])');
}
