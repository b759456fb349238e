/**
 * Whether a URL's hostname is a loopback address (localhost, 127.0.0.0/8, ::1): where `http` is
 * still private to the machine, so OAuth redirect URIs, providers' issuers and a prod APP_URL may
 * use it there and nowhere else.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
