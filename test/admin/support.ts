/** Helpers for the platform administration tests: admins from ADMIN_EMAILS, tokens' claims, impersonation. */
import assert from 'node:assert/strict';
import type { TestResponse } from '../support/http.js';
import { uniqueEmail } from '../support/auth.js';
import type { TestSystem } from '../support/system.js';
import { as, type TestAccount } from '../orgs/support.js';

/** Two admin addresses for a system: `verified` gets verified, `unverified` never does. */
export function adminAddresses(): { verified: string; unverified: string; env: Record<string, string> } {
  const verified = uniqueEmail('admin');
  const unverified = uniqueEmail('admin-unverified');
  // upper case and spaces in the setting: addresses are compared as stored (lower-cased)
  return { verified, unverified, env: { ADMIN_EMAILS: ` ${verified.toUpperCase()} , ${unverified}` } };
}

/** The claims of a JWT, unverified (the server verified it). */
export function claimsOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

/** Impersonates `who` as `admin`; asserts 200 and returns the impersonated session as a TestAccount with its refresh token. */
export async function impersonate(
  t: TestSystem,
  admin: TestAccount,
  who: TestAccount,
  reason = 'support ticket #42',
): Promise<TestAccount & { refresh: string; res: TestResponse }> {
  const res = await as(t, admin, 'POST', `/api/admin/accounts/${who.id}/impersonate`, { reason });
  assert.equal(res.status, 200, res.text);
  return { id: who.id, email: who.email, token: res.body['access-token'], refresh: res.body['refresh-token'], res };
}
