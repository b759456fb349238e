/**
 * The provider sign-in events against a fake transport: the callback's outcome read from the
 * landing URL (and taken out of it), the providers and identities loaded, a link sent to the
 * provider's URL, an unlink.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Route } from '../../src/client/app.js';
import { noticeOf, oauthErrorMessage, registerOidc } from '../../src/client/oidc/events.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const identity = {
  id: '00000000-0000-4000-8000-0000000000a1',
  provider: 'acme',
  email: 'ada@acme.test',
  'created-at': '2026-01-01T00:00:00.000Z',
  'last-used-at': null,
};

function setup(route: Route, signedIn: boolean) {
  const assigned: string[] = [];
  const replaced: string[] = [];
  const { core, requests, run } = fakeClient(
    route,
    (req) => {
      switch (callOf(req)) {
        case 'GET /api/auth/providers':
          return answer({ providers: [{ id: 'acme', name: 'Acme' }] });
        case 'GET /api/account/identities':
          return answer({ identities: [identity], 'has-password': true });
        case 'POST /api/auth/oauth/acme/link':
          return answer({ url: 'https://idp.example/auth?state=s' });
        case `DELETE /api/account/identities/${identity.id}`:
          return { status: 204, contentType: null, text: '' };
        default:
          return undefined;
      }
    },
    { session: signedIn ? 'account' : 'none' },
  );
  registerOidc(core, { assign: (url) => assigned.push(url), replaceUrl: (path) => replaced.push(path) });
  return { core, requests, assigned, replaced, run };
}

describe('client provider sign-in events', () => {
  it("reads the callback's error on the log-in page, takes it out of the URL and names the provider", async () => {
    const { core, requests, replaced, run } = setup('log-in', false);
    await run(['oidc/page-enter', 'log-in', '?error=email-in-use&provider=acme']);
    assert.deepEqual(core.state.oauthNotice, { route: 'log-in', kind: 'error', code: 'email-in-use', provider: 'acme' });
    assert.deepEqual(replaced, ['/log-in']);
    assert.deepEqual(requests.map(callOf), ['GET /api/auth/providers']);
    assert.deepEqual(core.state.providers, [{ id: 'acme', name: 'Acme' }]);
    assert.match(oauthErrorMessage('email-in-use', 'Acme'), /Log in with your password, verify the address (.*), then link Acme/);
    assert.match(oauthErrorMessage('something-new', 'Acme'), /Something went wrong/);
    // the SAML join refused at the plan's seat cap (/log-in?error=seat-limit) says why, not that SSO failed
    assert.deepEqual(noticeOf('log-in', '?error=seat-limit'), { route: 'log-in', kind: 'error', code: 'seat-limit', provider: '' });
    assert.match(oauthErrorMessage('seat-limit', ''), /no free seat/);
  });

  it('keeps no notice without a code, and none meant for another page', () => {
    assert.equal(noticeOf('log-in', ''), undefined);
    assert.equal(noticeOf('sign-up', '?error=access-denied&provider=acme'), undefined);
    assert.deepEqual(noticeOf('account', '?linked=acme'), { route: 'account', kind: 'linked', code: 'linked', provider: 'acme' });
  });

  it("loads the signed-in account's identities, links through the provider's URL, unlinks", async () => {
    const { core, requests, assigned, run } = setup('security', true);
    await run(['oidc/page-enter', 'security', '']);
    assert.deepEqual(core.state.signInMethods, { identities: [identity], hasPassword: true });
    await run(['identities/link', 'acme']);
    assert.deepEqual(assigned, ['https://idp.example/auth?state=s']);
    const link = requests.find((r) => callOf(r) === 'POST /api/auth/oauth/acme/link')!;
    assert.equal(link.headers.authorization, 'Bearer access-1');
    await run(['identities/unlink', identity.id]);
    assert.deepEqual(core.state.signInMethods?.identities, []);
    assert.deepEqual(core.state.unlinking, []);
  });
});
