/**
 * The `has-session` hint cookie: set and cleared together with the refresh cookie, so the
 * browser client asks for a refresh only when one can succeed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { browserSession, cookiesOf, logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const expiresOf = (attributes: string) => /Expires=([^;]+)/i.exec(attributes)?.[1];
const cleared = (attributes: string) => /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(attributes);

describe('the has-session hint cookie', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0], { LOGIN_LIMIT_ADDRESS: '0' });
  });
  after(async () => t?.stop());

  it('comes with the refresh cookie at log-in and refresh: readable by scripts, site-wide, same expiry', async () => {
    const { email } = await signUp(t.client);
    const login = await logIn(t.client, email);
    for (const res of [login, await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': login.body['refresh-token'] } })]) {
      assert.equal(res.status, 200);
      const { 'has-session': hint, 'refresh-token': refresh } = cookiesOf(res);
      assert.equal(hint?.value, '1');
      assert.doesNotMatch(hint.attributes, /HttpOnly/i);
      assert.match(hint.attributes, /SameSite=Strict/i);
      assert.match(hint.attributes, /Path=\/(;|$)/);
      assert.ok(expiresOf(hint.attributes));
      assert.equal(expiresOf(hint.attributes), expiresOf(refresh.attributes));
    }
  });

  it('is cleared with the refresh cookie when a refresh fails with 401, and at log-out', async () => {
    const browser = await browserSession(t.client);
    const failed = await t.client('POST', '/api/account/refresh', {
      headers: { cookie: `${browser.cookie}; refresh-token=not-a-token; has-session=1`, 'x-csrf-token': browser.csrf },
      body: {},
    });
    assert.equal(failed.status, 401);
    assert.ok(cleared(cookiesOf(failed)['has-session'].attributes), 'hint cleared');
    assert.ok(cleared(cookiesOf(failed)['refresh-token'].attributes), 'refresh cookie cleared');
    assert.match(cookiesOf(failed)['has-session'].attributes, /Path=\/(;|$)/);

    const { email } = await signUp(t.client);
    const token = (await logIn(t.client, email)).body['refresh-token'];
    const out = await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': token } });
    assert.equal(out.status, 204);
    assert.ok(cleared(cookiesOf(out)['has-session'].attributes));
    assert.ok(cleared(cookiesOf(out)['refresh-token'].attributes));
  });
});
