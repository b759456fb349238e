import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PASSWORD, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl && process.env.CI === 'true') throw new Error('CI=true requires TEST_REDIS_URL');

describe('Log-in and sign-up limits shared through Redis', { skip: redisUrl ? false : 'TEST_REDIS_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  before(async () => {
    const db = testDatabases().at(-1)!;
    const env = { REDIS_URL: redisUrl!, TRUST_PROXY: '1', LOGIN_LIMIT_EMAIL: '4/60', LOGIN_LIMIT_ADDRESS: '0', SIGNUP_LIMIT_ADDRESS: '4/60' };
    a = await startSystem(db, env);
    b = await startSystem(db, env);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  // Redis outlives a test run: clients of this run only (documentation prefix 2001:db8::/32; a
  // client is a /64, so each n is a /64 of its own)
  const run = randomBytes(3).toString('hex');
  const address = (n: number) => `2001:db8:${run.slice(0, 4)}:${run.slice(4)}${n.toString(16).padStart(2, '0')}::1`;
  const from = (n: number) => ({ 'x-forwarded-for': address(n) });
  // each instance has a database of its own; Redis is what they share
  const signUpOnBoth = async () => {
    const email = uniqueEmail();
    for (const client of [a.client, b.client]) {
      const res = await client('POST', '/api/account/sign-up', { headers: from(100), body: { email, password: PASSWORD } });
      assert.equal(res.status, 201, res.text);
    }
    return email;
  };

  it('counts failures on both instances against one limit, per email + address', async () => {
    const email = await signUpOnBoth();
    for (const client of [a.client, b.client, a.client, b.client]) {
      assert.equal((await client('POST', '/api/account/log-in', { headers: from(1), body: { email, password: 'wrong-password' } })).status, 401);
    }
    for (const client of [a.client, b.client]) {
      const res = await client('POST', '/api/account/log-in', { headers: from(1), body: { email, password: PASSWORD } });
      assert.equal(res.status, 429);
      assert.ok(Number(res.headers['retry-after']) > 0);
    }
    // the owner, elsewhere, is not locked out
    assert.equal((await b.client('POST', '/api/account/log-in', { headers: from(9), body: { email, password: PASSWORD } })).status, 200);
  });

  it('gives successful log-ins their point back in Redis', async () => {
    const email = await signUpOnBoth();
    for (let i = 0; i < 8; i++) {
      const client = i % 2 ? a.client : b.client;
      assert.equal((await client('POST', '/api/account/log-in', { headers: from(2), body: { email, password: PASSWORD } })).status, 200);
    }
  });

  it('counts sign-ups from one address on both instances', async () => {
    const signUpFrom = (client: typeof a.client) =>
      client('POST', '/api/account/sign-up', { headers: from(3), body: { email: uniqueEmail(), password: PASSWORD } });
    for (const client of [a.client, b.client, a.client, b.client]) assert.equal((await signUpFrom(client)).status, 201);
    assert.equal((await signUpFrom(a.client)).status, 429);
  });
});
