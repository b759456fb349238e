/**
 * CSRF protection (synchronizer token bound to a session cookie). `index.html` carries the
 * token in the hidden `__anti-forgery-token` field; the token is an HMAC of the signed
 * `session` cookie's id, so any instance with the same secret can check it without storage.
 * Unsafe requests to API routes that carry a session or refresh-token cookie must send it back
 * as `X-CSRF-Token`; cross-site unsafe requests are refused outright, and so are unsafe API
 * requests whose Origin (or Referer) names another origin than the app's, cookies or not:
 * log-in and sign-up carry none, and browsers without Sec-Fetch-Site still send Origin.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from './errors.js';
import { isApiRoute, type RouteConfig } from './routes.js';
import { routeDataOf } from './route-data.js';
import type { RequestStep } from './request-steps.js';

export const SESSION_COOKIE = 'session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class CsrfService {
  constructor(private readonly secret: string) {}

  tokenFor(sessionId: string): string {
    return createHmac('sha256', this.secret).update(`csrf:${sessionId}`).digest('base64url');
  }

  verify(sessionId: string, token: string): boolean {
    const expected = Buffer.from(this.tokenFor(sessionId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** The session id from the signed cookie, or undefined when absent or tampered with. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const raw = request.cookies?.[SESSION_COOKIE];
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}

/** The session id for a page load: the existing one, or a new one set as a cookie. */
export function ensureSession(request: FastifyRequest, reply: FastifyReply, secure: boolean): string {
  const existing = sessionIdOf(request);
  if (existing) return existing;
  const id = randomBytes(24).toString('base64url');
  reply.setCookie(SESSION_COOKIE, id, { path: '/', httpOnly: true, sameSite: 'lax', secure, signed: true });
  return id;
}

export interface CsrfCheckOptions {
  /** cookies that carry credentials (besides `session`) and so need the token */
  credentialCookies: readonly string[];
  /** the app's own origin (APP_URL) and ALLOWED_ORIGINS, as `scheme://host[:port]` */
  allowedOrigins: readonly string[];
}

/**
 * The origin an unsafe request says it comes from: Origin, or without it Referer's origin;
 * undefined when neither is sent (curl, server clients). `Origin: null` (sandboxed frames,
 * some redirects) and an unparseable Referer come back as 'null', an origin nothing allows.
 */
export function claimedOrigin(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') return origin === 'null' ? 'null' : originOf(origin);
  const referer = request.headers.referer;
  if (typeof referer === 'string' && referer !== '') return originOf(referer);
  return undefined;
}

/**
 * The origin names the host the request was sent to: a same-origin request, whatever APP_URL
 * says (a browser writes Origin itself; a page on another host cannot claim this one). This is
 * Go's CrossOriginProtection rule; APP_URL and ALLOWED_ORIGINS cover proxies that rewrite Host.
 */
function sameHost(origin: string, host: string | undefined): boolean {
  if (!host || origin === 'null') return false;
  return origin.slice(origin.indexOf('://') + 3) === host.toLowerCase();
}

function originOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? 'null' : origin;
  } catch {
    return 'null';
  }
}

/**
 * The CSRF and origin checks on every unsafe request, a step of the app's `onRequest` hook
 * (request-steps.ts). The route's data decides what is an API route (routes may opt out with
 * `csrf: false`), never the raw URL.
 */
export function csrfStep(csrf: CsrfService, options: CsrfCheckOptions): RequestStep {
  const { credentialCookies } = options;
  const allowed = new Set(options.allowedOrigins);
  return (request) => {
    if (SAFE_METHODS.has(request.method)) return undefined;
    const config = routeDataOf(request) as Partial<RouteConfig>;
    if (config?.csrf === false) return undefined;
    if (request.headers['sec-fetch-site'] === 'cross-site') return forbidden('Cross-site request refused', { reason: 'cross-site' });
    if (!isApiRoute(request)) return undefined;
    const origin = claimedOrigin(request);
    if (origin !== undefined && !allowed.has(origin) && !sameHost(origin, request.headers.host)) {
      return forbidden('Request from another origin refused', { reason: 'origin' });
    }
    const cookies = request.cookies ?? {};
    const carriesCredentials = cookies[SESSION_COOKIE] !== undefined || credentialCookies.some((name) => cookies[name] !== undefined);
    if (!carriesCredentials) return undefined;
    const token = request.headers[CSRF_HEADER];
    const sessionId = sessionIdOf(request);
    if (typeof token !== 'string' || !sessionId || !csrf.verify(sessionId, token)) {
      return forbidden('Missing or invalid CSRF token', { reason: 'csrf' });
    }
    return undefined;
  };
}
