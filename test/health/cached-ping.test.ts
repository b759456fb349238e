import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedPing } from '../../src/health/routes.js';

describe('health ping cache', () => {
  it('shares one in-flight ping, reuses its answer for the max age, then asks again', async () => {
    let calls = 0;
    let up = true;
    let now = 0;
    const ping = cachedPing(
      async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 5));
        return up;
      },
      500,
      () => now,
    );
    assert.deepEqual(await Promise.all([ping(1000), ping(1000), ping(1000)]), [true, true, true]);
    assert.equal(calls, 1);
    up = false;
    now = 499;
    assert.equal(await ping(1000), true, 'still the cached answer');
    now = 500;
    assert.equal(await ping(1000), false, 'asked again after the max age');
    assert.equal(calls, 2);
  });

  it('knows the answer without asking while it is fresh, and nothing before the first or after the max age', async () => {
    let now = 0;
    let calls = 0;
    const ping = cachedPing(
      async () => {
        calls++;
        return false;
      },
      500,
      () => now,
    );
    assert.equal(ping.known(), undefined, 'no answer yet');
    assert.equal(await ping(1000), false);
    now = 499;
    assert.equal(ping.known(), false, 'a fresh "down" is known too');
    now = 500;
    assert.equal(ping.known(), undefined, 'stale: the handler must ask');
    assert.equal(calls, 1, 'known() never asks');
  });
});
