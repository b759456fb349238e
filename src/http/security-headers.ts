/**
 * Security headers (helmet's defaults, adjusted for this app). helmet derives its headers on
 * every request, which measured at ~74 µs per request here (a third of the whole pipeline),
 * while for this app they never change: so they are computed once, by helmet itself, and set
 * as a block on each response. Routes that need their own policy (Swagger UI) override them.
 */
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Runs helmet once against a recording response and returns the headers it set. */
export function computeSecurityHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
    getHeader(name: string) {
      return headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
  return headers;
}

/**
 * The headers for API responses (OWASP REST Security Cheat Sheet): JSON, EDN and Transit are
 * never rendered as documents, so they get the short set that matters for them (no sniffing,
 * no framing, no caching of tokens) instead of the document policies, which also keeps each
 * response small.
 */
export function apiSecurityHeaders(https: boolean): Record<string, string> {
  return {
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
    ...(https ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

/**
 * Other origins the client's page reaches, contributed by modules (src/runtime/module.ts
 * `pageOrigins`): `connect` for its requests (an upload posted straight to a bucket), `img` for
 * its images (a signed link that redirects to a bucket). Each is an origin, `scheme://host[:port]`.
 */
export interface PageOrigins {
  img: string[];
  connect: string[];
}

/**
 * `https`: APP_URL is https (prod on http serves one's own machine: no HSTS, no upgraded requests
 * there); `origins`: what the modules add to the page's `img-src` and `connect-src`.
 */
export function securityHeaderOptions(https: boolean, origins: PageOrigins = { img: [], connect: [] }): HelmetOptions {
  return {
    // HSTS only makes sense behind TLS
    strictTransportSecurity: https,
    // documents (the client's page): scripts and styles from this server only, no 'unsafe-inline'
    // (the client sets no style attribute in markup; the theme is classes and CSS variables);
    // images from here and data: URLs (the two-factor QR code), requests to here (default-src);
    // plus the origins modules name (a bucket's). Pages with their own policy (the dev mailbox,
    // Swagger UI) set it themselves.
    contentSecurityPolicy: {
      directives: {
        'script-src': ["'self'"],
        'style-src': ["'self'"],
        'img-src': ["'self'", 'data:', ...unique(origins.img)],
        ...(origins.connect.length > 0 ? { 'connect-src': ["'self'", ...unique(origins.connect)] } : {}),
        'upgrade-insecure-requests': https ? [] : null,
      },
    },
  };
}

const unique = (list: string[]) => [...new Set(list)];
