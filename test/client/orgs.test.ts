/**
 * The organization events against a fake transport: routing of `/orgs/<id>`, the current
 * organization in storage, and the invitation landing page waiting for a session and for a
 * verified address.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { transitJson } from '../../src/shared/codecs.js';
import { registerAccount } from '../../src/client/account/events.js';
import { registerApp, routeOf, type Account, type AppState, type Route } from '../../src/client/app.js';
import { EventCore, type EventVector } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { CURRENT_ORG_KEY, orgIdOf, PENDING_INVITATION_KEY, registerOrgs, type Organization } from '../../src/client/orgs/events.js';

const account: Account = {
  id: '7d1a3c1e-1111-4c1e-9a3b-000000000001',
  email: 'ada@example.test',
  name: 'Ada',
  'created-at': '2026-01-01T00:00:00.000Z',
  subscription: { status: 'none', plan: null, 'current-period-end': null },
  'email-verified': true,
};
const org = (id: string, name: string, personal = false): Organization => ({
  id,
  name,
  slug: name.toLowerCase(),
  personal,
  'created-at': '2026-01-01T00:00:00.000Z',
  role: 'owner',
  subscription: { status: 'none', plan: null, 'current-period-end': null, 'cancel-at-period-end': false, 'has-customer': false },
});
const PERSONAL = org('00000000-0000-4000-8000-000000000001', 'Ada', true);
const SHARED = org('00000000-0000-4000-8000-000000000002', 'Acme');

const ok = (body: unknown, status = 200): TransportResponse => ({ status, contentType: transitJson.mime, text: transitJson.encode(body) });

function setup(
  route: Route,
  handler: (req: TransportRequest) => TransportResponse | undefined,
  options: { signedIn?: boolean; stored?: Record<string, string> } = {},
) {
  const stored = new Map(Object.entries(options.stored ?? {}));
  const requests: TransportRequest[] = [];
  const navigated: string[] = [];
  const replaced: string[] = [];
  const state: AppState = { route, toasts: [], busy: false, ready: true, ...(options.signedIn !== false ? { token: 'access-1', account } : {}) };
  const core = new EventCore<AppState>(state);
  registerApp(
    core,
    {
      transport: async (req) => {
        requests.push(req);
        return handler(req) ?? ok({ type: 'not-found', message: 'no such route' }, 404);
      },
      csrfToken: () => 'csrf-1',
    },
    (path) => navigated.push(path),
  );
  registerAccount(core, { replaceUrl: (path) => replaced.push(path), download: () => undefined });
  registerOrgs(core, {
    storage: {
      getItem: (k) => stored.get(k) ?? null,
      setItem: (k, v) => {
        stored.set(k, v);
      },
      removeItem: (k) => {
        stored.delete(k);
      },
    },
  });
  core.regFx('later', () => undefined);
  core.dispatchSync(['orgs/init']);
  const run = async (event: EventVector, wait = 30) => {
    core.dispatch(event);
    await sleep(wait);
  };
  return { core, requests, navigated, replaced, stored, run };
}

const call = (r: TransportRequest) => `${r.method} ${new URL(r.url, 'http://x').pathname}`;

describe('client organization events', () => {
  it('routes /orgs and /orgs/<id>, and reads the id', () => {
    assert.equal(routeOf('/orgs'), 'orgs');
    assert.equal(routeOf(`/orgs/${SHARED.id}`), 'org');
    assert.equal(routeOf('/invitations/accept'), 'accept-invitation');
    assert.equal(orgIdOf(`/orgs/${SHARED.id}`), SHARED.id);
    assert.equal(orgIdOf('/orgs/not-an-id'), undefined);
  });

  it('loads the list once per account, keeps a stored current organization and falls back to the personal one', async () => {
    const s = setup('account', (req) => (call(req) === 'GET /api/orgs' ? ok({ organizations: [PERSONAL, SHARED] }) : undefined), {
      stored: { [CURRENT_ORG_KEY]: SHARED.id },
    });
    await s.run(['orgs/page-enter', 'account', '']);
    assert.deepEqual(s.requests.map(call), ['GET /api/orgs']);
    assert.equal(s.core.state.currentOrg, SHARED.id);
    await s.run(['orgs/page-enter', 'settings', '']);
    assert.equal(s.requests.length, 1, 'not asked again for the same account');

    const gone = setup('account', () => ok({ organizations: [PERSONAL] }), { stored: { [CURRENT_ORG_KEY]: SHARED.id } });
    await gone.run(['orgs/page-enter', 'account', '']);
    assert.equal(gone.core.state.currentOrg, PERSONAL.id);
    assert.equal(gone.stored.get(CURRENT_ORG_KEY), PERSONAL.id);
  });

  it('selecting an organization stores it and opens its page', async () => {
    const s = setup('orgs', () => undefined);
    await s.run(['orgs/select', SHARED.id]);
    assert.equal(s.stored.get(CURRENT_ORG_KEY), SHARED.id);
    assert.deepEqual(s.navigated, [`/orgs/${SHARED.id}`]);
    assert.equal(s.core.state.route, 'org');
  });

  it('keeps an invitation opened without a session, and accepts it once the visitor is signed in', async () => {
    const visitor = setup('accept-invitation', () => undefined, { signedIn: false });
    await visitor.run(['orgs/page-enter', 'accept-invitation', '?token=tok-1']);
    assert.equal(visitor.core.state.invitationPage?.status, 'needs-session');
    assert.equal(visitor.stored.get(PENDING_INVITATION_KEY), 'tok-1');
    assert.deepEqual(visitor.replaced, ['/invitations/accept'], 'the token leaves the address bar');
    assert.deepEqual(visitor.requests, []);

    // later, signed in (maybe in another tab): the account page sends it back to the invitation
    let verified = false;
    const s = setup(
      'account',
      (req) => {
        if (call(req) === 'GET /api/orgs') return ok({ organizations: verified ? [PERSONAL, SHARED] : [PERSONAL] });
        if (call(req) === 'POST /api/invitations/accept') {
          return verified ? ok(SHARED) : ok({ type: 'forbidden', reason: 'email-unverified', message: 'Verify first' }, 403);
        }
        return undefined;
      },
      { stored: { [PENDING_INVITATION_KEY]: 'tok-1' } },
    );
    await s.run(['orgs/page-enter', 'account', '']);
    assert.deepEqual(s.navigated, ['/invitations/accept']);
    await s.run(['orgs/page-enter', 'accept-invitation', '']);
    assert.equal(s.core.state.invitationPage?.status, 'unverified');
    assert.equal(s.stored.get(PENDING_INVITATION_KEY), 'tok-1', 'kept for after the verification');
    const accept = s.requests.find((r) => call(r) === 'POST /api/invitations/accept')!;
    assert.deepEqual(transitJson.decode(accept.body!), { token: 'tok-1' });

    verified = true;
    await s.run(['invitation/accept']);
    assert.equal(s.stored.get(PENDING_INVITATION_KEY), undefined);
    assert.equal(s.core.state.currentOrg, SHARED.id);
    assert.equal(s.navigated.at(-1), `/orgs/${SHARED.id}`);
  });

  it('forgets an invitation whose token cannot work any more', async () => {
    const s = setup('accept-invitation', () => ok({ type: 'invalid-token', message: 'invalid' }, 400), { stored: { [PENDING_INVITATION_KEY]: 'old' } });
    await s.run(['invitation/open', '']);
    assert.equal(s.core.state.invitationPage?.status, 'failed');
    assert.equal(s.stored.get(PENDING_INVITATION_KEY), undefined);
    assert.equal(s.core.state.pendingInvitation, undefined);
  });
});
