/** Helpers for account tests: sign up and log in over HTTP, read cookies, get a CSRF session. */
import { authModule, type AuthServices } from '../../src/auth/module.js';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AuthUser } from '../../src/http/routes.js';
import type { System } from '../../src/system.js';
import type { TestClient, TestResponse } from './http.js';
import { mailedLink } from './mailbox.js';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

export async function signUp(client: TestClient, email = uniqueEmail(), password = PASSWORD): Promise<{ email: string; password: string; id: string }> {
  const res = await client('POST', '/api/account/sign-up', { body: { email, password, name: 'Test User' } });
  assert.equal(res.status, 201, res.text);
  return { email, password, id: res.body.account.id };
}

/**
 * Opens the newest verification link mailed to `email`, as its owner does in the browser that
 * signed up (a lasting sign-in method or an API key needs a verified address): with an access
 * token of the account's own, so the password stays (a first proof without a session of the
 * account removes it). The token is minted, not a log-in: nothing else (an audit entry, a known
 * browser) is left behind. Done before the test's own log-ins, since a first proof ends the
 * sessions opened before it.
 */
export async function verifyEmail(t: { client: TestClient; system: System }, email: string): Promise<void> {
  const { token } = await mailedLink(t.system, email, 'verify-email');
  const account = await t.system.database.db.selectFrom('account').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  const access = await mintAccessToken(t.system, { id: account.id, email, sessionId: randomUUID(), authTime: Math.floor(Date.now() / 1000) });
  const res = await t.client('POST', '/api/account/verify-email', { headers: { authorization: `Bearer ${access}` }, body: { token } });
  assert.equal(res.status, 200, res.text);
}

/** Signs up and verifies the address. */
export async function signUpVerified(
  t: { client: TestClient; system: System },
  email = uniqueEmail(),
  password = PASSWORD,
): Promise<{ email: string; password: string; id: string }> {
  const account = await signUp(t.client, email, password);
  await verifyEmail(t, account.email);
  return account;
}

export async function logIn(client: TestClient, email: string, password = PASSWORD): Promise<TestResponse> {
  return client('POST', '/api/account/log-in', { body: { email, password } });
}

/** `name=value` pairs of the Set-Cookie headers of a response. */
export function cookiesOf(res: TestResponse): Record<string, { value: string; attributes: string }> {
  const out: Record<string, { value: string; attributes: string }> = {};
  const raw = res.headers['set-cookie'];
  for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq).trim()] = { value: pair.slice(eq + 1), attributes: attrs.join(';') };
  }
  return out;
}

/** Loads index.html like a browser: returns the session cookie and the CSRF token in the page. */
export async function browserSession(client: TestClient): Promise<{ cookie: string; csrf: string }> {
  const page = await client('GET', '/', { headers: { accept: 'text/html' } });
  const csrf = /id="__anti-forgery-token" value="([^"]+)"/.exec(page.text)?.[1];
  assert.ok(csrf, 'the page carries a CSRF token');
  return { cookie: `session=${cookiesOf(page).session.value}`, csrf };
}

/** The claims of an access token (not verified: the test made it or got it from the server). */
export function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * An access token signed with the system's own key, for a session of the test's choosing: a
 * sign-in long ago (`authTime`) is how re-authentication's "recent sign-in" is tested.
 */
export async function mintAccessToken(system: System, user: AuthUser): Promise<string> {
  return system.services<AuthServices>(authModule).accessTokens.issue(user);
}
