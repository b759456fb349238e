import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl && process.env.CI === 'true') throw new Error('CI=true requires TEST_REDIS_URL');

describe('Log-in limits shared through Redis', { skip: redisUrl ? false : 'TEST_REDIS_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  before(async () => {
    const db = testDatabases().at(-1)!;
    const env = { REDIS_URL: redisUrl!, LOGIN_LIMIT_EMAIL: '4/60', LOGIN_LIMIT_ADDRESS: '0' };
    a = await startSystem(db, env);
    b = await startSystem(db, env);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('counts attempts on both instances against one limit', async () => {
    const { email } = await signUp(a.client);
    for (const client of [a.client, b.client, a.client, b.client]) assert.equal((await logIn(client, email, 'wrong-password')).status, 401);
    assert.equal((await logIn(a.client, email)).status, 429);
    assert.equal((await logIn(b.client, email)).status, 429);
  });
});
