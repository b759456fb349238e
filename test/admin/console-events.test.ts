/**
 * The admin console's client events against a fake transport: the routes, the Platform links
 * shown to platform admins only (never inside an impersonation), a prefix search with its cursor
 * (a stale answer for an older prefix ignored), the 404 of a non-admin as "not found", locking
 * with the reason, and impersonation: the session switched, then stopped and the admin's own
 * restored by a refresh.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FEATURES, registerApp, routeOf, type AppState } from '../../src/client/app.js';
import { adminAccountIdOf, adminAccountPath, isPlatformAdmin, registerAdmin } from '../../src/client/admin/events.js';
import { EventCore } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import type { Account } from '../../src/client/shell/state.js';
import { transitJson } from '../../src/shared/codecs.js';

const ID = '00000000-0000-4000-8000-000000000007';
const ok = (body: unknown, status = 200): TransportResponse => ({ status, contentType: transitJson.mime, text: transitJson.encode(body) });
const me = (extra: Partial<Account> = {}): Account => ({
  id: '00000000-0000-4000-8000-000000000001',
  email: 'ops@example.com',
  name: null,
  'created-at': '2026-01-01T00:00:00.000Z',
  subscription: { status: 'none', plan: null, 'current-period-end': null },
  ...extra,
});
const row = (id: string, email: string) => ({
  id,
  email,
  name: null,
  'created-at': '2026-01-01T00:00:00.000Z',
  'email-verified': true,
  locked: false,
  'two-factor-enabled': false,
  'last-seen-at': null,
});

function setup(handler: (req: TransportRequest) => TransportResponse, account: Account = me({ 'platform-admin': true })) {
  const requests: TransportRequest[] = [];
  const navigations: string[] = [];
  const core = new EventCore<AppState>({ route: 'admin-accounts', toasts: [], busy: false, ready: true, locale: 'en', token: 'admin-token', account });
  registerApp(
    core,
    {
      transport: async (req) => {
        requests.push(req);
        return handler(req);
      },
      csrfToken: () => 'csrf-1',
    },
    (path) => navigations.push(path),
  );
  registerAdmin(core);
  core.regFx('later', () => undefined);
  const run = async (event: [string, ...unknown[]]) => {
    core.dispatch(event);
    await sleep(30);
  };
  return { core, requests, navigations, run };
}

const adminLinks = (state: AppState) =>
  FEATURES.flatMap((f) => f.nav ?? [])
    .filter((n) => n.section === 'admin')
    .map((n) => n.path?.(state, '/admin'))
    .filter(Boolean);

describe('client admin console events', () => {
  it('routes the console and shows its links to platform admins only, never while impersonating', () => {
    assert.equal(routeOf('/admin'), 'admin');
    assert.equal(routeOf('/admin/accounts'), 'admin-accounts');
    assert.equal(routeOf(adminAccountPath(ID)), 'admin-account');
    assert.equal(routeOf('/admin/orgs'), 'admin-orgs');
    assert.equal(routeOf('/admin/audit-log'), 'admin-audit');
    assert.equal(adminAccountIdOf(adminAccountPath(ID)), ID);
    const base = { route: 'account', toasts: [], busy: false, ready: true, locale: 'en' } as AppState;
    assert.deepEqual(adminLinks({ ...base, account: me() }), []);
    assert.deepEqual(adminLinks({ ...base, account: me({ 'platform-admin': true }) }), ['/admin', '/admin/accounts', '/admin/orgs', '/admin/audit-log']);
    const impersonating = { ...base, account: me({ 'platform-admin': true, 'impersonated-by': { id: ID, email: 'ops@example.com' } }) };
    assert.equal(isPlatformAdmin(impersonating), false);
    assert.deepEqual(adminLinks(impersonating), []);
  });

  it('searches by prefix, pages with the cursor, and ignores an answer for an older prefix', async () => {
    const s = setup((req) => {
      const q = new URL(req.url, 'http://x').searchParams;
      if (q.get('cursor') === 'c1') return ok({ accounts: [row('2', 'ann2@example.com')], 'next-cursor': null });
      return ok({ accounts: [row('1', 'ann1@example.com')], 'next-cursor': 'c1' });
    });
    await s.run(['admin/list-open', 'accounts', '  ann ']);
    const first = new URL(s.requests[0].url, 'http://x');
    assert.equal(first.pathname, '/api/admin/accounts');
    assert.equal(first.searchParams.get('q'), 'ann');
    assert.equal(s.requests[0].headers.authorization, 'Bearer admin-token');
    await s.run(['admin/list-more', 'accounts']);
    assert.equal(new URL(s.requests[1].url, 'http://x').searchParams.get('q'), 'ann');
    assert.deepEqual(
      s.core.state.adminAccounts?.items.map((a) => a.id),
      ['1', '2'],
    );
    assert.equal(s.core.state.adminAccounts?.nextCursor, null);
    s.core.dispatchSync(['admin/list-loaded', 'accounts', 'older', { accounts: [row('9', 'x@example.com')], 'next-cursor': null }]);
    assert.deepEqual(
      s.core.state.adminAccounts?.items.map((a) => a.id),
      ['1', '2'],
      'a stale answer is dropped',
    );
  });

  it('shows a non-admin "not found" as the server answers it, without a toast', async () => {
    const s = setup(() => ok({ type: 'not-found', message: 'No route for GET /api/admin/stats' }, 404), me());
    await s.run(['admin/stats-open']);
    assert.equal(s.core.state.adminStats?.status, 'missing');
    assert.equal(s.core.state.toasts.length, 0);
  });

  it('locks with the reason and shows the account as it is now', async () => {
    const s = setup((req) => (req.url.endsWith('/lock') ? ok({ ...row(ID, 'c@example.com'), locked: true }) : ok({ ...row(ID, 'c@example.com') })));
    await s.run(['admin/account-open', ID]);
    await s.run(['admin/account-action', 'lock', { reason: ' fraud ' }]);
    const lock = s.requests[1];
    assert.equal(new URL(lock.url, 'http://x').pathname, `/api/admin/accounts/${ID}/lock`);
    assert.deepEqual(transitJson.decode(lock.body as string), { reason: 'fraud' });
    assert.equal(s.core.state.adminAccount?.account?.locked, true);
  });

  it("impersonates: the session becomes the account's; stop ends it and a refresh restores the admin's own", async () => {
    const customer = me({ id: ID, email: 'c@example.com', 'impersonated-by': { id: '1', email: 'ops@example.com' } });
    const s = setup((req) => {
      const path = new URL(req.url, 'http://x').pathname;
      if (path.endsWith('/impersonate')) return ok({ 'access-token': 'acting-token', 'token-type': 'Bearer', 'expires-in': 900, account: customer });
      if (path === '/api/admin/impersonation/stop') return { status: 204, contentType: '', text: '' };
      if (path === '/api/account/refresh')
        return ok({ 'access-token': 'admin-token-2', 'token-type': 'Bearer', 'expires-in': 900, account: me({ 'platform-admin': true }) });
      return ok(row(ID, 'c@example.com'));
    });
    await s.run(['admin/account-open', ID]);
    await s.run(['admin/impersonate', { reason: 'ticket 42' }]);
    assert.equal(s.core.state.token, 'acting-token');
    assert.equal(s.core.state.account?.['impersonated-by']?.email, 'ops@example.com');
    assert.equal(s.navigations.at(-1), '/account');
    await s.run(['impersonation/stop']);
    const stop = s.requests.find((r) => r.url.endsWith('/admin/impersonation/stop'));
    assert.equal(stop?.headers.authorization, 'Bearer acting-token', "stopped with the impersonated session's own token");
    assert.equal(s.core.state.token, 'admin-token-2');
    assert.equal(s.core.state.account?.['impersonated-by'], undefined);
    assert.equal(s.navigations.at(-1), '/admin/accounts');
  });
});
