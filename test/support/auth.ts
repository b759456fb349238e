/** Helpers for account tests: sign up and log in over HTTP, read cookies, get a CSRF session. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestClient, TestResponse } from './http.js';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

export async function signUp(client: TestClient, email = uniqueEmail(), password = PASSWORD): Promise<{ email: string; password: string; id: string }> {
  const res = await client('POST', '/api/account/sign-up', { body: { email, password, name: 'Test User' } });
  assert.equal(res.status, 201, res.text);
  return { email, password, id: res.body.account.id };
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
