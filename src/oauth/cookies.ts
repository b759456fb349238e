/**
 * The provider's cookies (oidc-provider, koa's signed cookies): their names, keys and flags, and
 * the check of the interaction cookie the consent API reads. `Secure` exactly when APP_URL is
 * https (a Secure cookie over plain http is refused: docs/deployment.md); there the interaction
 * and session cookies carry the `__Host-` prefix, so no other host or path can set them.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { LogOutCookie } from '../account/routes.js';
import type { Config } from '../config.js';

export interface ProviderCookies {
  keys: string[];
  names: { session: string; interaction: string; resume: string };
  secure: boolean;
}

const SESSION = 'oauth_session';
const INTERACTION = 'oauth_interaction';

/** The provider's cookies of a signed-in browser, cleared by the product's log-out (src/account/routes.ts). */
export const LOG_OUT_COOKIES: LogOutCookie[] = [
  { name: SESSION, path: '/', hostPrefix: true, signed: true },
  { name: INTERACTION, path: '/', hostPrefix: true, signed: true },
];

export function providerCookies(config: Config): ProviderCookies {
  const key = Buffer.from(hkdfSync('sha256', config.sessionSecret, 'saas-oauth', 'cookies', 32)).toString('base64url');
  const host = config.secureCookies ? '__Host-' : '';
  return {
    keys: [key],
    // the resume cookie is scoped to its authorization's path, which `__Host-` forbids
    names: { session: `${host}${SESSION}`, interaction: `${host}${INTERACTION}`, resume: 'oauth_resume' },
    secure: config.secureCookies,
  };
}

/** koa's (keygrip's) signature of a cookie: HMAC-SHA1 of `name=value`, base64url. */
function signature(key: string, name: string, value: string): string {
  return createHmac('sha1', key).update(`${name}=${value}`).digest('base64url');
}

/**
 * The interaction uid the browser's cookie names, when its signature is the provider's (a cookie
 * planted without the key names nothing); undefined otherwise.
 */
export function signedInteraction(cookies: ProviderCookies, jar: Record<string, string | undefined> | undefined): string | undefined {
  const name = cookies.names.interaction;
  const value = jar?.[name];
  const sig = jar?.[`${name}.sig`];
  if (!value || !sig) return undefined;
  const presented = Buffer.from(sig);
  for (const key of cookies.keys) {
    const expected = Buffer.from(signature(key, name, value));
    if (expected.length === presented.length && timingSafeEqual(expected, presented)) return value;
  }
  return undefined;
}
