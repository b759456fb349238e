/**
 * CSRF protection (synchronizer token bound to a session cookie). `index.html` carries the
 * token in the hidden `__anti-forgery-token` field; the token is an HMAC of the signed
 * `session` cookie's id, so any instance with the same secret can check it without storage.
 * Unsafe requests under `/api` that carry a session or refresh-token cookie must send it back
 * as `X-CSRF-Token`; cross-site unsafe requests are refused outright.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../http/errors.js';
import type { RouteConfig } from '../http/routes.js';

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

/** Registers the CSRF check on every unsafe request under `/api` (routes may opt out). */
export function installCsrfCheck(app: FastifyInstance, csrf: CsrfService, credentialCookies: readonly string[]): void {
  const check = (request: FastifyRequest): Error | undefined => {
    const config = request.routeOptions.config as Partial<RouteConfig> | undefined;
    if (config?.csrf === false) return undefined;
    if (request.headers['sec-fetch-site'] === 'cross-site') return forbidden('Cross-site request refused', { reason: 'cross-site' });
    if (!request.url.startsWith('/api/') && request.url !== '/api') return undefined;
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
  app.addHook('onRequest', (request, _reply, done) => {
    if (SAFE_METHODS.has(request.method)) return done();
    const refused = check(request);
    if (refused) done(refused);
    else done();
  });
}
