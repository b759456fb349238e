/**
 * The account lifecycle's events against a fake transport: the requests they make (paths,
 * methods, bodies, tokens), what they do with the answers, and the browser effects they ask for
 * (the token leaving the URL, the export offered as a file, navigation).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { registerAccount } from '../../src/client/account/events.js';
import { registerSessions, type Session } from '../../src/client/account/sessions-events.js';
import { routeOf, type Account, type Route } from '../../src/client/app.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { ACCOUNT, answer, fakeClient } from '../support/client-events.js';

type Handler = (req: TransportRequest) => TransportResponse | undefined;

const account: Account = { ...ACCOUNT, 'email-verified': false };

const noContent: TransportResponse = { status: 204, contentType: null, text: '' };

/** The app's, the lifecycle's and the sessions page's events on one core, with every browser effect recorded. */
function setup(route: Route, handler: Handler, signedIn = true) {
  const requests: Array<TransportRequest & { decoded?: unknown }> = [];
  const replaced: string[] = [];
  const downloads: Array<{ filename: string; type: string; text: string }> = [];
  const respond = (req: TransportRequest) => {
    requests.push({ ...req, decoded: req.body ? transitJson.decode(req.body) : undefined });
    return handler(req);
  };
  const { core, navigated, run } = fakeClient(route, respond, { session: signedIn ? 'account' : 'none', account });
  registerAccount(core, { replaceUrl: (path) => replaced.push(path), download: (file) => downloads.push(file) });
  registerSessions(core);
  const toasts = () => core.state.toasts.map((t) => `${t.kind}: ${t.message}`);
  return { core, requests, replaced, navigated, downloads, run, toasts };
}

const call = (r: TransportRequest) => `${r.method} ${r.url}`;

describe('client account lifecycle events', () => {
  it("log-out goes to the log-in page, except on a page that shows it in place (an app's sign-in request, signing in again to allow it)", async () => {
    const loggedOut = () => answer(null, 204);
    const elsewhere = fakeClient('account', loggedOut);
    await elsewhere.run(['log-out']);
    assert.deepEqual(elsewhere.navigated, ['/log-in']);
    const consent = fakeClient('authorize', loggedOut);
    await consent.run(['log-out']);
    assert.deepEqual(consent.navigated, [], 'the consent page stays: it shows the log-in in place');
    assert.equal(consent.core.state.token, undefined);
    assert.equal(consent.core.state.route, 'authorize');
  });

  it('routes every lifecycle path, ignoring a trailing slash', () => {
    assert.equal(routeOf('/verify-email'), 'verify-email');
    assert.equal(routeOf('/confirm-email'), 'confirm-email');
    assert.equal(routeOf('/reset-password'), 'reset-password');
    assert.equal(routeOf('/forgot-password'), 'forgot-password');
    assert.equal(routeOf('/settings/'), 'settings');
    assert.equal(routeOf('/settings/sessions'), 'sessions');
    assert.equal(routeOf('/settings/delete'), 'delete-account');
    assert.equal(routeOf('/settings/security'), 'security');
    assert.equal(routeOf('/'), 'home');
    assert.equal(routeOf('/nowhere'), 'not-found', 'an unknown path is the 404 page');
  });

  it('verify-email: sends the token from the query once, takes it out of the URL, and shows the verified account', async () => {
    const verified = { ...account, 'email-verified': true };
    const t = setup('verify-email', (req) => (req.url === '/api/account/verify-email' ? answer(verified) : undefined));
    await t.run(['page/enter', 'verify-email', '?token=tok-abc&utm=x']);
    assert.deepEqual(t.requests.map(call), ['POST /api/account/verify-email']);
    assert.deepEqual(t.requests[0].decoded, { token: 'tok-abc' });
    assert.equal(t.requests[0].headers['x-csrf-token'], 'csrf-1');
    assert.deepEqual(t.replaced, ['/verify-email']);
    assert.deepEqual(t.core.state.tokenPage, { route: 'verify-email', status: 'done' });
    assert.equal(t.core.state.account?.['email-verified'], true, 'the signed-in account shows as verified');

    // entering again (the token has left the URL) neither re-sends nor forgets the outcome
    await t.run(['page/enter', 'verify-email', '']);
    assert.equal(t.requests.length, 1);
    assert.equal(t.core.state.tokenPage?.status, 'done');
  });

  it('verify-email: a proof that removed the password set before it goes on to the reset page with its token', async () => {
    const verified = { ...account, 'email-verified': true, 'password-reset-token': 'reset-7' };
    const t = setup(
      'verify-email',
      (req) => (req.url === '/api/account/verify-email' ? answer(verified) : req.url === '/api/account/reset-password' ? noContent : undefined),
      false,
    );
    await t.run(['page/enter', 'verify-email', '?token=tok-abc']);
    assert.equal(t.core.state.route, 'reset-password');
    assert.equal(t.core.state.resetToken, 'reset-7');
    assert.deepEqual(t.toasts(), ['info: Your address is confirmed. A password set on this account before was removed: choose a new one.']);
    await t.run(['reset-password/submit', { password: 'a new password', 'confirm-password': 'a new password' }]);
    assert.deepEqual(t.requests.at(-1)?.decoded, { token: 'reset-7', password: 'a new password' });
    assert.equal(t.core.state.route, 'log-in');
  });

  it('verify-email: an invalid token and a missing one are shown as failures', async () => {
    const bad = setup('verify-email', () => answer({ type: 'invalid-token', message: 'Invalid token' }, 400), false);
    await bad.run(['page/enter', 'verify-email', '?token=used']);
    assert.equal(bad.core.state.tokenPage?.status, 'failed');
    assert.match(bad.core.state.tokenPage?.message ?? '', /invalid, already used or expired/);
    assert.deepEqual(bad.replaced, ['/verify-email']);

    const missing = setup('confirm-email', () => answer({}), false);
    await missing.run(['page/enter', 'confirm-email', '']);
    assert.equal(missing.requests.length, 0);
    assert.equal(missing.core.state.tokenPage?.route, 'confirm-email');
    assert.equal(missing.core.state.tokenPage?.status, 'failed');
  });

  it('confirm-email: posts the token and shows the account with its new email when it is the signed-in one', async () => {
    const changed = { ...account, email: 'new@example.test', 'email-verified': true };
    const t = setup('confirm-email', (req) => (req.url === '/api/account/confirm-email' ? answer(changed) : undefined));
    await t.run(['page/enter', 'confirm-email', '?token=c-1']);
    assert.deepEqual(t.requests[0].decoded, { token: 'c-1' });
    assert.deepEqual(t.replaced, ['/confirm-email']);
    assert.equal(t.core.state.account?.email, 'new@example.test');
  });

  it('a log-in restored on a link or settings page stays there; from log-in it goes to the account', async () => {
    for (const [route, expected] of [
      ['verify-email', []],
      ['settings', []],
      ['log-in', ['/account']],
    ] as Array<[Route, string[]]>) {
      const t = setup(route, () => undefined, false);
      await t.run(['auth/logged-in', { quiet: true }, { 'access-token': 'a', account }]);
      assert.deepEqual(t.navigated, expected, route);
    }
  });

  it('forgot-password: posts the email and says the same thing whatever the answer', async () => {
    const t = setup('forgot-password', () => ({ status: 202, contentType: null, text: '' }), false);
    await t.run(['forgot-password/submit', { email: 'who@example.test' }]);
    assert.deepEqual(t.requests.map(call), ['POST /api/account/forgot-password']);
    assert.deepEqual(t.requests[0].decoded, { email: 'who@example.test' });
    assert.equal(t.core.state.forgotSent, true);
    assert.equal(t.core.state.busy, false);
  });

  it('reset-password: keeps the token out of the URL, checks the confirmation, then posts and sends to log in with a toast', async () => {
    const t = setup('reset-password', (req) => (req.url === '/api/account/reset-password' ? noContent : undefined), false);
    await t.run(['page/enter', 'reset-password', '?token=r-9']);
    assert.deepEqual(t.replaced, ['/reset-password']);
    assert.equal(t.core.state.resetToken, 'r-9');

    await t.run(['reset-password/submit', { password: 'a new password', 'confirm-password': 'another one' }]);
    assert.equal(t.requests.length, 0);
    assert.equal(t.core.state.fieldErrors?.['reset-password']?.['confirm-password'], 'The passwords do not match');

    await t.run(['reset-password/submit', { password: 'a new password', 'confirm-password': 'a new password' }]);
    assert.deepEqual(t.requests.map(call), ['POST /api/account/reset-password']);
    assert.deepEqual(t.requests[0].decoded, { token: 'r-9', password: 'a new password' });
    assert.equal(t.core.state.resetToken, undefined);
    assert.equal(t.core.state.route, 'log-in');
    assert.deepEqual(t.navigated, ['/log-in']);
    assert.deepEqual(t.toasts(), ['info: Your password was changed. Log in with the new one.']);
  });

  it('settings: the name by PATCH /api/account/me, email and password changes with their bodies, each with the bearer token', async () => {
    const t = setup('settings', (req) => {
      if (req.url === '/api/account/me' && req.method === 'PATCH') return answer({ ...account, name: 'Ada L.' });
      if (req.url === '/api/account/change-email') return { status: 202, contentType: null, text: '' };
      if (req.url === '/api/account/change-password') return noContent;
      return undefined;
    });
    await t.run(['settings/save-name', { name: '  Ada L. ' }]);
    await t.run(['settings/change-email', { 'new-email': 'new@example.test', password: 'pw-current' }]);
    await t.run(['settings/change-password', { 'current-password': 'pw-current', password: 'pw-next-long', 'confirm-password': 'pw-next-long' }]);
    assert.deepEqual(t.requests.map(call), ['PATCH /api/account/me', 'POST /api/account/change-email', 'POST /api/account/change-password']);
    assert.deepEqual(
      t.requests.map((r) => r.decoded),
      [{ name: 'Ada L.' }, { password: 'pw-current', 'new-email': 'new@example.test' }, { 'current-password': 'pw-current', password: 'pw-next-long' }],
    );
    for (const r of t.requests) assert.equal(r.headers.authorization, 'Bearer access-1');
    assert.equal(t.core.state.account?.name, 'Ada L.');
    assert.equal(t.core.state.emailChangeSentTo, 'new@example.test');
    assert.deepEqual(t.core.state.formResets, { 'settings-name': 1, 'change-email': 1, 'change-password': 1 });
    assert.equal(t.toasts().length, 3);
  });

  it('puts the server field errors beside their fields: request-coercion paths, and a taken email on new-email', async () => {
    const t = setup('settings', (req) =>
      req.url === '/api/account/change-password'
        ? answer(
            {
              type: 'request-coercion',
              in: 'body',
              message: 'Invalid request body',
              errors: [{ path: '/password', message: 'must NOT have fewer than 8 characters' }],
            },
            400,
          )
        : answer({ type: 'conflict', message: 'That email is taken' }, 409),
    );
    await t.run(['settings/change-password', { 'current-password': 'x', password: 'short', 'confirm-password': 'short' }]);
    await t.run(['settings/change-email', { 'new-email': 'taken@example.test', password: 'pw' }]);
    assert.deepEqual(t.core.state.fieldErrors, {
      'change-password': { password: 'must NOT have fewer than 8 characters' },
      'change-email': { 'new-email': 'That email is taken' },
    });
    assert.equal(t.core.state.busy, false);
    assert.deepEqual(t.toasts(), ['error: Invalid request body: password must NOT have fewer than 8 characters', 'error: That email is taken']);
    assert.equal(t.core.state.emailChangeSentTo, undefined);
  });

  it('sessions: loads the list on entering, ends one, and "end all others" sends one DELETE per other session', async () => {
    const sessions: Session[] = [
      { id: 's-current', 'created-at': '2026-01-01T00:00:00Z', 'last-used-at': '2026-01-02T00:00:00Z', 'user-agent': 'Firefox', ip: '10.0.0.1', current: true },
      { id: 's-2', 'created-at': '2026-01-01T00:00:00Z', 'last-used-at': '2026-01-02T00:00:00Z', 'user-agent': 'Chrome', ip: '10.0.0.2', current: false },
      { id: 's-3', 'created-at': '2026-01-01T00:00:00Z', 'last-used-at': '2026-01-02T00:00:00Z', 'user-agent': null, ip: null, current: false },
      { id: 's/4', 'created-at': '2026-01-01T00:00:00Z', 'last-used-at': '2026-01-02T00:00:00Z', 'user-agent': 'curl', ip: '10.0.0.4', current: false },
    ];
    const t = setup('sessions', (req) => {
      if (req.url === '/api/account/sessions') return answer({ sessions });
      if (req.method === 'DELETE') return noContent;
      return undefined;
    });
    await t.run(['page/enter', 'sessions', '']);
    assert.deepEqual(
      t.core.state.sessions?.map((s) => s.id),
      ['s-current', 's-2', 's-3', 's/4'],
    );

    await t.run(['sessions/end', 's-2']);
    assert.deepEqual(
      t.core.state.sessions?.map((s) => s.id),
      ['s-current', 's-3', 's/4'],
    );

    t.requests.length = 0;
    await t.run(['sessions/end-others']);
    assert.deepEqual(t.requests.map(call).sort(), ['DELETE /api/account/sessions/s%2F4', 'DELETE /api/account/sessions/s-3']);
    for (const r of t.requests) assert.equal(r.headers.authorization, 'Bearer access-1');
    assert.deepEqual(
      t.core.state.sessions?.map((s) => s.id),
      ['s-current'],
    );
    assert.deepEqual(t.core.state.endingSessions, []);

    t.requests.length = 0;
    await t.run(['sessions/end-others']);
    assert.equal(t.requests.length, 0, 'only the current session is left: nothing to end');
  });

  it('a session that fails to end stays listed and can be tried again', async () => {
    const t = setup('sessions', () => answer({ type: 'not-found', message: 'No such session' }, 404));
    t.core.dispatchSync(['sessions/loaded', [{ id: 'gone', 'created-at': '', 'last-used-at': '', 'user-agent': null, ip: null, current: false }]]);
    await t.run(['sessions/end', 'gone']);
    assert.deepEqual(
      t.core.state.sessions?.map((s) => s.id),
      ['gone'],
    );
    assert.deepEqual(t.core.state.endingSessions, []);
    assert.deepEqual(t.toasts(), ['error: No such session']);
  });

  it('delete: refuses without the typed email, then posts the password and logs out to log-in with a toast', async () => {
    const t = setup('delete-account', (req) => (req.url === '/api/account/delete' ? noContent : undefined));
    await t.run(['account/delete', { 'confirm-email': 'someone@else.test', password: 'pw' }]);
    assert.equal(t.requests.length, 0);
    assert.match(t.core.state.fieldErrors?.['delete-account']?.['confirm-email'] ?? '', /ada@example\.test/);

    await t.run(['account/delete', { 'confirm-email': ' ADA@example.test ', password: 'pw' }]);
    assert.deepEqual(t.requests.map(call), ['POST /api/account/delete']);
    assert.deepEqual(t.requests[0].decoded, { password: 'pw' });
    assert.equal(t.core.state.token, undefined);
    assert.equal(t.core.state.account, undefined);
    assert.deepEqual(t.navigated, ['/log-in']);
    assert.deepEqual(t.toasts(), ['info: Your account was deleted']);
  });

  it('export: GETs the export as JSON with the bearer token and offers it as a .json file', async () => {
    const data = { account: { email: account.email }, sessions: [], memberships: [], 'payment-events': [] };
    const t = setup('settings', (req) =>
      req.url === '/api/account/export' ? { status: 200, contentType: 'application/json', text: JSON.stringify(data) } : undefined,
    );
    await t.run(['account/export']);
    assert.deepEqual(t.requests.map(call), ['GET /api/account/export']);
    assert.equal(t.requests[0].headers.accept, 'application/json');
    assert.equal(t.requests[0].headers.authorization, 'Bearer access-1');
    assert.equal(t.downloads.length, 1);
    assert.match(t.downloads[0].filename, /^account-export-\d{4}-\d\d-\d\d\.json$/);
    assert.equal(t.downloads[0].type, 'application/json');
    assert.deepEqual(JSON.parse(t.downloads[0].text), data);
    assert.equal(t.core.state.busy, false);
  });

  it('resend verification: posts with the bearer token and confirms with a toast', async () => {
    const t = setup('account', (req) => (req.url === '/api/account/resend-verification' ? { status: 202, contentType: null, text: '' } : undefined));
    await t.run(['verification/resend']);
    assert.deepEqual(t.requests.map(call), ['POST /api/account/resend-verification']);
    assert.equal(t.requests[0].headers.authorization, 'Bearer access-1');
    assert.deepEqual(t.toasts(), ['info: A new verification link is on its way to ada@example.test']);
  });
});
