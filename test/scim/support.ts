/**
 * An organization with a verified domain and a SCIM token, as a directory (Okta, Entra ID) is
 * connected to it, and a SCIM request as the directory sends it.
 */
import assert from 'node:assert/strict';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import type { TestResponse } from '../support/http.js';
import { startSystem, type TestDatabase, type TestSystem } from '../support/system.js';
import { dnsServer, uniqueDomain, verifiedDomain, type TestDns } from '../sso/support.js';

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface Directory {
  t: TestSystem;
  dns: TestDns;
  owner: TestAccount;
  orgId: string;
  domain: string;
  token: string;
  /** a SCIM request with the directory's token (or `bearer`), its body parsed into `json` */
  scim(method: string, path: string, body?: unknown, bearer?: string): Promise<TestResponse & { json: any }>;
  stop(): Promise<void>;
}

export async function startDirectory(db: TestDatabase, env: Record<string, string> = {}): Promise<Directory> {
  const dns = await dnsServer();
  const t = await startSystem(db, { DNS_SERVERS: dns.server, ...env });
  const owner = await account(t);
  const orgId = await createOrg(t, owner, 'Directory');
  const domain = uniqueDomain();
  await verifiedDomain(t, dns, owner, orgId, domain);
  const created = await as(t, owner, 'POST', `/api/orgs/${orgId}/scim-tokens`, { name: 'Okta' });
  assert.equal(created.status, 201, created.text);
  const token: string = created.body.token;
  return {
    t,
    dns,
    owner,
    orgId,
    domain,
    token,
    async scim(method, path, body, bearer = token) {
      const res = await t.client(method, `/scim/v2${path}`, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/scim+json',
          ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        },
      });
      return { ...res, json: res.text ? JSON.parse(res.text) : undefined };
    },
    async stop() {
      await t.stop();
      await dns.close();
    },
  };
}
