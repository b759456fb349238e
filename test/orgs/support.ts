/** Helpers for organization tests: accounts with tokens, verified addresses, organizations with members in each role. */
import assert from 'node:assert/strict';
import type { TestResponse } from '../support/http.js';
import { logIn, signUp, uniqueEmail, verifyEmail } from '../support/auth.js';
import type { TestSystem } from '../support/system.js';

export interface TestAccount {
  id: string;
  email: string;
  token: string;
}

export async function account(t: TestSystem, options: { verified?: boolean; email?: string } = {}): Promise<TestAccount> {
  const { id, email } = await signUp(t.client, options.email ?? uniqueEmail('org'));
  if (options.verified !== false) await verify(t, email);
  const res = await logIn(t.client, email);
  assert.equal(res.status, 200, res.text);
  return { id, email, token: res.body['access-token'] };
}

/** The token of the newest link of `kind` mailed to `to`. */
export async function mailedToken(t: TestSystem, to: string, kind: 'verify-email' | 'invitation'): Promise<string> {
  const [message] = await t.system.mail.mailbox.list({ to, kind });
  assert.ok(message, `a ${kind} message to ${to}`);
  const token = /[?&]token=([^\s&"<]+)/.exec(message.text ?? '')?.[1];
  assert.ok(token, 'the message carries a link with a token');
  return decodeURIComponent(token);
}

/** Opens the verification link as `who` (its session stays: a first proof ends every other one), or else as the browser that signed up (verifyEmail). */
export async function verify(t: TestSystem, email: string, who?: TestAccount): Promise<void> {
  if (!who) return verifyEmail(t, email);
  const res = await t.client('POST', '/api/account/verify-email', {
    headers: { authorization: `Bearer ${who.token}` },
    body: { token: await mailedToken(t, email, 'verify-email') },
  });
  assert.equal(res.status, 200, res.text);
}

/** A request as `who` (a bearer token, so no CSRF token is needed). */
export function as(t: TestSystem, who: TestAccount | undefined, method: string, path: string, body?: unknown): Promise<TestResponse> {
  return t.client(method, path, { body, headers: who ? { authorization: `Bearer ${who.token}` } : {} });
}

export async function createOrg(t: TestSystem, owner: TestAccount, name = 'Acme'): Promise<string> {
  const res = await as(t, owner, 'POST', '/api/orgs', { name });
  assert.equal(res.status, 201, res.text);
  return res.body.id as string;
}

/** Adds `who` to the organization with `role` through an invitation the way users do. */
export async function addMember(t: TestSystem, orgId: string, by: TestAccount, who: TestAccount, role: 'owner' | 'admin' | 'member'): Promise<void> {
  const invited = await as(t, by, 'POST', `/api/orgs/${orgId}/invitations`, { email: who.email, role });
  assert.equal(invited.status, 201, invited.text);
  const accepted = await as(t, who, 'POST', '/api/invitations/accept', { token: await mailedToken(t, who.email, 'invitation') });
  assert.equal(accepted.status, 200, accepted.text);
  assert.equal(accepted.body.role, role);
}
