/** Helpers for the OAuth tests: an app, a cookie-keeping browser, and one authorization through the consent page's API. */
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { PASSWORD } from '../support/auth.js';
import type { TestSystem } from '../support/system.js';

// nothing listens there: the tests read the redirect's Location
export const REDIRECT = 'http://127.0.0.1:8765/callback';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export async function createApp(
  t: Pick<TestSystem, 'client'>,
  token: string,
  orgId: string,
  options: { confidential: boolean; scopes: string[]; name?: string; redirect?: string },
): Promise<{ id: string; 'client-id': string; 'client-secret'?: string }> {
  const res = await t.client('POST', `/api/orgs/${orgId}/oauth-apps`, {
    headers: bearer(token),
    body: { name: options.name ?? 'Test app', 'redirect-uris': [options.redirect ?? REDIRECT], confidential: options.confidential, scopes: options.scopes },
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** A browser's cookies for the provider (its interaction and session cookies). */
export interface Browser {
  cookies: Map<string, string>;
  /** every Set-Cookie line the browser was sent, attributes included */
  setCookies: string[];
  /** GET with the cookies, without following a redirect: the Location */
  visit(url: string): Promise<{ status: number; location: string }>;
}

export function newBrowser(): Browser {
  const cookies = new Map<string, string>();
  const setCookies: string[] = [];
  return {
    cookies,
    setCookies,
    async visit(url) {
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const line of res.headers.getSetCookie()) {
        setCookies.push(line);
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      await res.arrayBuffer();
      return { status: res.status, location: new URL(res.headers.get('location') ?? '', url).href };
    },
  };
}

/** The provider's interaction cookie and its signature, as the browser sends them (http APP_URL: no `__Host-` prefix). */
export const INTERACTION_COOKIES = ['oauth_interaction', 'oauth_interaction.sig'];

/** The `Cookie` header a browser sends the consent API: its signed interaction cookie. */
export function interactionCookie(browser: Browser): string {
  return [...browser.cookies]
    .filter(([name]) => INTERACTION_COOKIES.some((base) => name === base || name === `__Host-${base}`))
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}

export interface Authorized {
  uid: string;
  interaction: any;
  tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  code: string;
  verifier: string;
  /** with openid only */
  nonce?: string;
  error?: string;
}

/**
 * One authorization: the app sends the browser to the provider, the consent page (its API, with
 * the person's own session token `token`) allows or denies, the browser comes back to the app,
 * which redeems the code with its PKCE verifier.
 */
export async function authorize(
  t: Pick<TestSystem, 'client'>,
  config: client.Configuration,
  browser: Browser,
  token: string,
  options: {
    scope: string;
    prompt?: string;
    allow?: boolean;
    maxAge?: number;
    password?: string | null;
    /** RFC 8707's `resource` of the authorization request (`APP_URL/mcp` for the MCP server) */
    resource?: string;
    /** the `resource` sent with the code at the token endpoint */
    tokenResource?: string;
  },
): Promise<Authorized> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  // a nonce belongs to OpenID Connect: a plain OAuth request (an MCP client's) sends none, and the provider refuses one without openid
  const openid = options.scope.split(' ').includes('openid');
  const nonce = openid ? client.randomNonce() : undefined;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: options.scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(nonce ? { nonce } : {}),
    ...(options.prompt ? { prompt: options.prompt } : {}),
    ...(options.maxAge !== undefined ? { max_age: String(options.maxAge) } : {}),
    ...(options.resource ? { resource: options.resource } : {}),
  });
  let step = await browser.visit(url.href);
  let uid = '';
  let interaction: any;
  for (let hops = 0; !step.location.startsWith(REDIRECT); hops++) {
    assert.ok(hops < 6, `too many redirects (at ${step.location})`);
    const page = /\/authorize\/([^/?#]+)$/.exec(step.location);
    if (page) {
      uid = page[1];
      // the browser's interaction cookie: the consent API answers only the browser the request started in
      const headers = { ...bearer(token), cookie: interactionCookie(browser) };
      const details = await t.client('GET', `/api/oauth/interactions/${uid}`, { headers });
      assert.equal(details.status, 200, details.text);
      interaction = details.body;
      const allow = interaction['consent-required'] ? (options.allow ?? true) : true;
      let consent = await t.client('POST', `/api/oauth/interactions/${uid}/consent`, { headers, body: { allow } });
      // a lasting or write scope, or a fresh sign-in asked: the page asks for the password, as a person gives it
      const password = options.password === undefined ? PASSWORD : options.password;
      if (consent.status === 403 && consent.body.type === 'reauthentication-required' && consent.body.method === 'password' && password !== null)
        consent = await t.client('POST', `/api/oauth/interactions/${uid}/consent`, { headers, body: { allow, password } });
      assert.equal(consent.status, 200, consent.text);
      step = await browser.visit(consent.body['redirect-to']);
    } else {
      assert.equal(step.status, 303, `a redirect from ${step.location}`);
      step = await browser.visit(step.location);
    }
  }
  const back = new URL(step.location);
  const error = back.searchParams.get('error') ?? undefined;
  if (error) return { uid, interaction, tokens: undefined as never, code: '', verifier, nonce, error };
  const code = back.searchParams.get('code')!;
  const tokens = await client.authorizationCodeGrant(
    config,
    back,
    { pkceCodeVerifier: verifier, expectedState: state, ...(nonce ? { expectedNonce: nonce } : {}) },
    options.tokenResource ? { resource: options.tokenResource } : undefined,
  );
  return { uid, interaction, tokens, code, verifier, nonce };
}
