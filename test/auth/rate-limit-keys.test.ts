/** Rate-limit keys and refunds: an IPv6 /64 is one client; a refund never reaches into the next window. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addressKey, LoginRateLimiter } from '../../src/auth/rate-limit.js';
import { HttpError } from '../../src/http/errors.js';

describe('addressKey', () => {
  it('gives an IPv6 client its /64, keeps IPv4 as it is, and reads IPv4-mapped IPv6 as IPv4', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'));
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('not an address'), 'not an address');
  });
});

describe('LoginRateLimiter', () => {
  it('counts every address of one IPv6 /64 against one limit', async () => {
    const limiter = new LoginRateLimiter({ email: { count: 3, seconds: 60 }, address: null });
    for (let i = 1; i <= 3; i++) await limiter.begin('victim@example.com', `2001:db8:1:2::${i}`);
    await assert.rejects(limiter.begin('victim@example.com', '2001:db8:1:2::99'), (err: unknown) => err instanceof HttpError && err.status === 429);
    // another /64 is another client
    await limiter.begin('victim@example.com', '2001:db8:1:3::1');
  });

  it('gives a point back only into the window it was taken from', async () => {
    const limiter = new LoginRateLimiter({ email: null, address: { count: 2, seconds: 1 } });
    const late = await limiter.begin('mine@example.com', '198.51.100.1');
    await sleep(1100); // the window the point came from has ended
    await late.refund();
    // a new window holds exactly its own 2 points, not 3
    await limiter.begin('a@example.com', '198.51.100.1');
    await limiter.begin('b@example.com', '198.51.100.1');
    await assert.rejects(limiter.begin('c@example.com', '198.51.100.1'), (err: unknown) => err instanceof HttpError && err.status === 429);
  });
});
