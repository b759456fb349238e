/**
 * The sign-in security events against a fake transport and fake WebAuthn ceremonies: log-in's
 * second step (code, backup code, a dead mfa-token back to the password), passkey sign-in, and
 * the account page's two-factor and passkey actions: the requests they make and the state after.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { registerAccount } from '../../src/client/account/events.js';
import { registerSecurity } from '../../src/client/account/security-events.js';
import { registerEmailSignIn } from '../../src/client/account/email-sign-in.js';
import type { Account, Route } from '../../src/client/app.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { ACCOUNT, answer, fakeClient } from '../support/client-events.js';

const account: Account = { ...ACCOUNT, 'two-factor-enabled': false };
const logInResponse = { 'access-token': 'access-2', 'refresh-token': 'r', 'token-type': 'Bearer', 'expires-in': 900, account };

function setup(route: Route, handler: (req: TransportRequest, body: Record<string, unknown>) => TransportResponse | undefined, signedIn = false) {
  const requests: Array<{ call: string; body: Record<string, unknown> }> = [];
  const ceremonies: Array<[string, unknown]> = [];
  const respond = (req: TransportRequest) => {
    const body = (req.body ? transitJson.decode(req.body) : {}) as Record<string, unknown>;
    requests.push({ call: `${req.method} ${req.url}`, body });
    return handler(req, body);
  };
  const { core, navigated, run } = fakeClient(route, respond, { session: signedIn ? 'account' : 'none', account });
  registerAccount(core, { replaceUrl: () => undefined, download: () => undefined });
  registerSecurity(core, {
    register: async (options) => {
      ceremonies.push(['register', options]);
      return { id: 'cred-1', response: { attestationObject: 'a' } };
    },
    authenticate: async (options) => {
      ceremonies.push(['authenticate', options]);
      if ((options as { challenge: string }).challenge === 'cancel') throw Object.assign(new Error('The operation was aborted'), { name: 'NotAllowedError' });
      return { id: 'cred-1', response: { signature: 's' } };
    },
  });
  registerEmailSignIn(core);
  return { core, requests, ceremonies, navigated, run, toasts: () => core.state.toasts.map((t) => t.message) };
}

describe('client sign-in security events', () => {
  it('a two-factor log-in asks for a code, then logs in; a dead mfa-token goes back to the password', async () => {
    let mfaAnswers = 0;
    const t = setup('log-in', (req, body) => {
      if (req.url === '/api/account/log-in') return answer({ 'mfa-required': true, 'mfa-token': 'mfa-1', 'expires-in': 300 });
      if (req.url === '/api/account/log-in/mfa') {
        mfaAnswers++;
        if (body.code === '000000')
          return answer({ type: 'unauthorized', message: 'The code is wrong', errors: [{ path: '/code', message: 'is wrong' }] }, 401);
        if (mfaAnswers > 3) return answer({ type: 'unauthorized', message: 'expired', errors: [{ path: '/mfa-token', message: 'is invalid' }] }, 401);
        return answer(logInResponse);
      }
      return undefined;
    });
    await t.run(['log-in/submit', { email: 'ada@example.test', password: 'pw' }]);
    assert.deepEqual(t.core.state.mfa, { token: 'mfa-1', backup: false });
    assert.equal(t.core.state.token, undefined, 'no session yet');

    await t.run(['mfa/submit', { code: '000 000' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/log-in/mfa', body: { 'mfa-token': 'mfa-1', code: '000000' } });
    assert.ok(t.core.state.mfa, 'a wrong code keeps the step');
    assert.deepEqual(t.toasts(), ['The code is wrong']);

    await t.run(['mfa/use-backup-code', true]);
    await t.run(['mfa/submit', { 'backup-code': ' abcde-fghjk ' }]);
    assert.deepEqual(t.requests.at(-1)?.body, { 'mfa-token': 'mfa-1', 'backup-code': 'abcde-fghjk' });
    assert.equal(t.core.state.token, 'access-2');
    assert.equal(t.core.state.mfa, undefined);
    assert.deepEqual(t.navigated, ['/account']);

    const again = setup('log-in', (req) =>
      req.url === '/api/account/log-in/mfa'
        ? answer({ type: 'unauthorized', message: 'expired', errors: [{ path: '/mfa-token', message: 'is invalid' }] }, 401)
        : answer({ 'mfa-required': true, 'mfa-token': 'mfa-2', 'expires-in': 300 }),
    );
    await again.run(['log-in/submit', { email: 'ada@example.test', password: 'pw' }]);
    await again.run(['mfa/submit', { code: '123456' }]);
    assert.equal(again.core.state.mfa, undefined, 'back to the password');
    assert.match(again.toasts()[0], /log in again/);
  });

  it('signs in with a passkey through the ceremony; a cancelled ceremony says so', async () => {
    const t = setup('log-in', (req, body) => {
      if (req.url === '/api/auth/passkey/options') return answer({ 'challenge-id': 'c-1', options: { challenge: 'abc', rpId: 'localhost' } });
      if (req.url === '/api/auth/passkey/verify') return body['challenge-id'] === 'c-1' ? answer(logInResponse) : undefined;
      return undefined;
    });
    await t.run(['passkey/sign-in'], 60);
    assert.deepEqual(t.ceremonies, [['authenticate', { challenge: 'abc', rpId: 'localhost' }]], 'camelCase options pass through');
    assert.deepEqual(
      t.requests.map((r) => r.call),
      ['POST /api/auth/passkey/options', 'POST /api/auth/passkey/verify'],
    );
    assert.deepEqual(t.requests[1].body, { 'challenge-id': 'c-1', response: { id: 'cred-1', response: { signature: 's' } } });
    assert.equal(t.core.state.token, 'access-2');

    const cancelled = setup('log-in', () => answer({ 'challenge-id': 'c-2', options: { challenge: 'cancel' } }));
    await cancelled.run(['passkey/sign-in'], 60);
    assert.equal(cancelled.requests.length, 1, 'nothing verified');
    assert.equal(cancelled.core.state.busy, false);
    assert.match(cancelled.toasts()[0], /No passkey was used/);
  });

  it('two-factor on the account page: setup, backup codes once, off', async () => {
    const t = setup(
      'account',
      (req, body) => {
        if (req.url === '/api/account/2fa/setup')
          return answer({
            secret: 'JBSWY3DPEHPK3PXP',
            'otpauth-url': 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP',
            'otpauth-qr': 'data:image/png;base64,iVBORw0KGgo=',
          });
        // the server asks for the password first: the dialog's answer goes with the request again
        if (req.url === '/api/account/2fa/enable') {
          return body.password === 'pw'
            ? answer({ 'backup-codes': ['aaaaa-bbbbb'] })
            : answer(
                { type: 'reauthentication-required', message: 'Confirm', method: 'password', errors: [{ path: '/password', message: 'is required' }] },
                403,
              );
        }
        if (req.url === '/api/account/2fa/backup-codes') return answer({ 'backup-codes': ['ccccc-ddddd'] });
        if (req.url === '/api/account/2fa/disable') return { status: 204, contentType: null, text: '' };
        return undefined;
      },
      true,
    );
    await t.run(['two-factor/setup']);
    assert.deepEqual(t.core.state.twoFactorSetup, {
      secret: 'JBSWY3DPEHPK3PXP',
      url: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP',
      qr: 'data:image/png;base64,iVBORw0KGgo=',
    });
    await t.run(['two-factor/enable', { code: '123 456' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/2fa/enable', body: { code: '123456' } });
    assert.deepEqual([t.core.state.reauth?.method, t.core.state.reauth?.field], ['password', 'password'], 'the dialog asks for the password');
    assert.deepEqual(t.toasts(), [], 'not a failure yet');
    await t.run(['reauth/submit', 'pw']);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/2fa/enable', body: { code: '123456', password: 'pw' } }, 'sent again with it');
    assert.equal(t.core.state.reauth, undefined);
    assert.deepEqual(t.core.state.backupCodes, ['aaaaa-bbbbb']);
    assert.equal(t.core.state.twoFactorSetup, undefined);
    assert.equal(t.core.state.account?.['two-factor-enabled'], true);
    await t.run(['backup-codes/dismiss']);
    assert.equal(t.core.state.backupCodes, undefined);
    await t.run(['backup-codes/regenerate', { code: '111 222' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/2fa/backup-codes', body: { code: '111222' } });
    assert.deepEqual(t.core.state.backupCodes, ['ccccc-ddddd'], 'the new codes are shown once');
    await t.run(['two-factor/disable', { code: '654321' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/2fa/disable', body: { code: '654321' } });
    assert.equal(t.core.state.account?.['two-factor-enabled'], false);
  });

  it('passkeys on the account page: add through the ceremony, rename, remove', async () => {
    const key = { id: 'k-1', name: 'Laptop', 'created-at': '2026-01-01T00:00:00.000Z', 'last-used-at': null };
    const t = setup(
      'account',
      (req, body) => {
        if (req.url === '/api/account/passkeys' && req.method === 'GET') return answer({ passkeys: [] });
        if (req.url === '/api/account/passkeys/register/options') return answer({ challenge: 'reg', rp: { name: 'SaaS' } });
        if (req.url === '/api/account/passkeys/register/verify') return answer({ ...key, name: body.name }, 201);
        if (req.url === '/api/account/passkeys/k-1' && req.method === 'PATCH') return answer({ ...key, name: body.name });
        if (req.url === '/api/account/passkeys/k-1' && req.method === 'DELETE') return { status: 204, contentType: null, text: '' };
        return undefined;
      },
      true,
    );
    const names = () => t.core.state.passkeys?.map((k) => k.name);
    await t.run(['passkeys/load']);
    assert.deepEqual(t.core.state.passkeys, []);
    await t.run(['passkeys/add', { name: 'Laptop' }], 60);
    assert.deepEqual(t.requests.find((r) => r.call === 'POST /api/account/passkeys/register/options')?.body, {});
    assert.deepEqual(t.ceremonies, [['register', { challenge: 'reg', rp: { name: 'SaaS' } }]]);
    assert.deepEqual(t.requests.at(-1)?.body, { response: { id: 'cred-1', response: { attestationObject: 'a' } }, name: 'Laptop' });
    assert.deepEqual(names(), ['Laptop']);
    await t.run(['passkeys/rename', 'k-1', 'Work laptop']);
    assert.deepEqual(names(), ['Work laptop']);
    await t.run(['passkeys/remove', 'k-1']);
    assert.deepEqual(t.core.state.passkeys, []);
    assert.ok(
      t.requests.every((r) => r.call.startsWith('GET') || r.call.includes('/api/account/')),
      'authenticated calls under the account API',
    );
  });

  it('re-authentication: an account without a password signs in again; a cancelled dialog fails the action', async () => {
    const t = setup(
      'account',
      (req) => {
        if (req.url === '/api/account/2fa/disable')
          return answer({ type: 'reauthentication-required', message: 'Sign in again', method: 'recent-sign-in', 'max-age': 600 }, 403);
        if (req.url === '/api/account/log-out') return { status: 204, contentType: null, text: '' };
        return undefined;
      },
      true,
    );
    await t.run(['two-factor/disable', { code: '654321' }]);
    assert.equal(t.core.state.reauth?.method, 'recent-sign-in');
    await t.run(['reauth/cancel']);
    assert.equal(t.core.state.reauth, undefined);
    assert.deepEqual(t.toasts(), ['Sign in again'], "the action's own failure events run");
    assert.equal(t.core.state.busy, false);
    await t.run(['two-factor/disable', { code: '654321' }]);
    await t.run(['reauth/sign-in-again']);
    assert.equal(t.requests.at(-1)?.call, 'POST /api/account/log-out');
    assert.equal(t.core.state.token, undefined, 'signed out, to sign in again');
  });

  it('the two-factor page takes the mfa-token a provider put in the fragment', async () => {
    const t = setup('log-in-two-factor', (req, body) =>
      req.url === '/api/account/log-in/mfa' && body['mfa-token'] === 'from-fragment' ? answer(logInResponse) : undefined,
    );
    await t.run(['mfa/pending', 'from-fragment']);
    await t.run(['mfa/submit', { code: '123456' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/log-in/mfa', body: { 'mfa-token': 'from-fragment', code: '123456' } });
    assert.equal(t.core.state.token, 'access-2');
  });

  it("email sign-in: asks, takes the code, and the link's page sends its token once", async () => {
    const t = setup('log-in', (req, body) => {
      if (req.url === '/api/auth/email/start') return answer({ message: 'on its way' }, 202);
      if (req.url === '/api/auth/email/verify' && body.code === '000000') return answer({ type: 'invalid-code', message: 'The code is wrong' }, 401);
      if (req.url === '/api/auth/email/verify' && (body.code === '123456' || body.token === 'link-token')) return answer(logInResponse);
      if (req.url === '/api/auth/email/verify') return answer({ type: 'invalid-token', message: 'bad' }, 400);
      return undefined;
    });
    await t.run(['email-sign-in/ask']);
    await t.run(['email-sign-in/start', { email: ' ada@example.test ' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/auth/email/start', body: { email: 'ada@example.test' } });
    assert.deepEqual(t.core.state.emailSignIn, { step: 'sent', email: 'ada@example.test' });
    await t.run(['email-sign-in/code', { code: '000 000' }]);
    assert.deepEqual(t.toasts(), ['The code is wrong']);
    assert.equal(t.core.state.emailSignIn?.step, 'sent', 'the code can be typed again');
    await t.run(['email-sign-in/code', { code: '123456' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/auth/email/verify', body: { email: 'ada@example.test', code: '123456' } });
    assert.equal(t.core.state.token, 'access-2');

    const link = setup('email-sign-in', (req, body) =>
      req.url === '/api/auth/email/verify' && body.token === 'link-token' ? answer(logInResponse) : answer({ type: 'invalid-token', message: 'bad' }, 400),
    );
    await link.run(['email-sign-in/open', '?token=used-token']);
    assert.equal(link.core.state.emailSignIn?.step, 'failed');
    await link.run(['email-sign-in/open', '?token=link-token']);
    assert.deepEqual(link.requests.at(-1), { call: 'POST /api/auth/email/verify', body: { token: 'link-token' } });
    assert.equal(link.core.state.token, 'access-2');
  });

  it('email sign-in that removed a password set before it: signed in, then on the reset page to set one, which signs out', async () => {
    const t = setup('email-sign-in', (req) => {
      if (req.url === '/api/auth/email/verify') return answer({ ...logInResponse, 'password-reset-token': 'reset-1' });
      if (req.url === '/api/account/reset-password') return { status: 204, contentType: null, text: '' };
      return undefined;
    });
    await t.run(['email-sign-in/open', '?token=link-token']);
    assert.equal(t.core.state.token, 'access-2', 'signed in');
    assert.equal(t.core.state.route, 'reset-password', 'on the page that sets a password, not the account');
    assert.equal(t.core.state.resetToken, 'reset-1');
    assert.ok(t.toasts().some((m) => /password set on this account before was removed/.test(m)));
    await t.run(['reset-password/submit', { password: 'a new password', 'confirm-password': 'a new password' }]);
    assert.deepEqual(t.requests.at(-1), { call: 'POST /api/account/reset-password', body: { token: 'reset-1', password: 'a new password' } });
    // the reset ended every session, this one too
    assert.equal(t.core.state.token, undefined);
    assert.equal(t.core.state.route, 'log-in');
  });
});
