import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

for (const db of testDatabases()) {
  describe(`Refresh reuse without grace on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { REFRESH_REUSE_GRACE: '0', PG_POOL_MAX: '10' });
    });
    after(async () => t?.stop());

    it('lets exactly one of two racing refreshes win', async () => {
      for (let round = 0; round < 5; round++) {
        const { email } = await signUp(t.client);
        const token = (await logIn(t.client, email)).body['refresh-token'];
        const results = await Promise.all([1, 2].map(() => t.client('POST', '/api/account/refresh', { body: { 'refresh-token': token } })));
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 401]);
      }
    });
  });

  describe(`Refresh reuse after the grace window on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { REFRESH_REUSE_GRACE: '1' });
    });
    after(async () => t?.stop());

    it('answers the just-rotated token inside the window and revokes the family after it', async () => {
      const { email } = await signUp(t.client);
      const t0 = (await logIn(t.client, email)).body['refresh-token'];
      const first = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t0 } });
      const again = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t0 } });
      assert.equal(again.status, 200);
      assert.equal(again.body['refresh-token'], first.body['refresh-token'], 'the current token, nothing new minted');
      await sleep(1300);
      const late = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t0 } });
      assert.equal(late.status, 401);
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': first.body['refresh-token'] } })).status, 401);
    });
  });
}
