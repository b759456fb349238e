/**
 * Locking and stopping an impersonation on one instance reach the others (issue 29): the locked
 * account's tokens, cached on a second instance, are refused there within a second, and so is
 * every sign-in; an impersonation stopped on one instance is over on the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { account, as, type TestAccount } from '../orgs/support.js';
import { logIn } from '../support/auth.js';
import type { TestClient } from '../support/http.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { adminAddresses, impersonate } from './support.js';

/** Asks `client` every 50 ms, for at most `boundMs`, until the token is refused (401). */
async function untilRefused(client: TestClient, token: string, boundMs = 3000): Promise<void> {
  const started = performance.now();
  for (;;) {
    const res = await client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } });
    if (res.status === 401) return;
    assert.equal(res.status, 200);
    assert.ok(performance.now() - started < boundMs, `still accepted after ${boundMs} ms`);
    await sleep(50);
  }
}

const pgUrl = process.env.TEST_DATABASE_URL;
describe('Admin actions across two instances on one PostgreSQL', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let dropDatabase: () => Promise<void>;
  let admin: TestAccount;
  const addresses = adminAddresses();

  before(async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    const created = await postgres.create();
    dropDatabase = created.drop;
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url: created.url, drop: async () => undefined }) };
    a = await startSystem(shared, addresses.env);
    b = await startSystem(shared, addresses.env);
    admin = await account(a, { email: addresses.verified });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await dropDatabase?.();
  });

  it("a lock on one instance refuses the account's tokens and sign-ins on the other; an unlock there restores sign-in", async () => {
    const user = await account(a);
    const onB = (await logIn(b.client, user.email)).body;
    for (const token of [user.token, onB['access-token']]) {
      assert.equal((await b.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } })).status, 200, 'cached on B');
    }
    assert.equal((await as(a, admin, 'POST', `/api/admin/accounts/${user.id}/lock`, { reason: 'abuse' })).status, 200);
    await untilRefused(b.client, user.token);
    await untilRefused(b.client, onB['access-token']);
    const login = await logIn(b.client, user.email);
    assert.equal(login.status, 403);
    assert.equal(login.body.type, 'account-locked');
    const refresh = await b.client('POST', '/api/account/refresh', { body: { 'refresh-token': onB['refresh-token'] } });
    assert.equal(refresh.status, 403);
    assert.equal((await as(b, admin, 'POST', `/api/admin/accounts/${user.id}/unlock`, {})).status, 200, 'admin routes on either instance');
    assert.equal((await logIn(a.client, user.email)).status, 200);
  });

  it('an impersonation stopped on one instance is over on the other', async () => {
    const user = await account(a);
    const session = await impersonate(a, admin, user);
    assert.equal((await as(b, session, 'GET', '/api/account/me')).status, 200, 'cached on B');
    assert.equal((await as(a, session, 'POST', '/api/admin/impersonation/stop', {})).status, 204);
    await untilRefused(b.client, session.token);
    assert.equal((await b.client('POST', '/api/account/refresh', { body: { 'refresh-token': session.refresh } })).status, 401);
  });
});
