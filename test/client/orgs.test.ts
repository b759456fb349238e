/**
 * The organization events against a fake transport: routing of `/orgs/<id>`, the current
 * organization in storage, and the invitation landing page waiting for a session and for a
 * verified address.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { registerAccount } from '../../src/client/account/events.js';
import { routeOf, type Route } from '../../src/client/app.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { adminOfCurrent, currentOrgIdOf } from '../../src/client/orgs/current-org.js';
import { CURRENT_ORG_KEY, orgIdOf, PENDING_INVITATION_KEY, registerOrgs, type Organization } from '../../src/client/orgs/events.js';
import { orgs } from '../../src/client/orgs/feature.js';
import type { AppState } from '../../src/client/shell/state.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

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

function setup(
  route: Route,
  handler: (req: TransportRequest) => TransportResponse | undefined,
  options: { signedIn?: boolean; stored?: Record<string, string> } = {},
) {
  const stored = new Map(Object.entries(options.stored ?? {}));
  const replaced: string[] = [];
  const { core, requests, navigated, run } = fakeClient(route, handler, { session: options.signedIn !== false ? 'account' : 'none' });
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
  core.dispatchSync(['orgs/init']);
  return { core, requests, navigated, replaced, stored, run };
}

describe('client organization events', () => {
  it('routes /orgs and /orgs/<id>, and reads the id', () => {
    assert.equal(routeOf('/orgs'), 'orgs');
    assert.equal(routeOf(`/orgs/${SHARED.id}`), 'org');
    assert.equal(routeOf('/invitations/accept'), 'accept-invitation');
    assert.equal(orgIdOf(`/orgs/${SHARED.id}`), SHARED.id);
    assert.equal(orgIdOf('/orgs/not-an-id'), undefined);
  });

  it('loads the list once per account, keeps a stored current organization and falls back to the personal one', async () => {
    const s = setup('account', (req) => (callOf(req) === 'GET /api/orgs' ? answer({ organizations: [PERSONAL, SHARED] }) : undefined), {
      stored: { [CURRENT_ORG_KEY]: SHARED.id },
    });
    await s.run(['orgs/page-enter', 'account', '']);
    assert.deepEqual(s.requests.map(callOf), ['GET /api/orgs']);
    assert.equal(s.core.state.currentOrg, SHARED.id);
    await s.run(['orgs/page-enter', 'settings', '']);
    assert.equal(s.requests.length, 1, 'not asked again for the same account');

    const gone = setup('account', () => answer({ organizations: [PERSONAL] }), { stored: { [CURRENT_ORG_KEY]: SHARED.id } });
    await gone.run(['orgs/page-enter', 'account', '']);
    assert.equal(gone.core.state.currentOrg, PERSONAL.id);
    assert.equal(gone.stored.get(CURRENT_ORG_KEY), PERSONAL.id);
  });

  it("takes the current organization from the page's path when the caller is a member of it, else the one chosen last", () => {
    const state = { orgs: [PERSONAL, { ...SHARED, role: 'member' as const }], currentOrg: PERSONAL.id };
    assert.equal(currentOrgIdOf(state, `/orgs/${SHARED.id}/webhooks`), SHARED.id);
    assert.equal(currentOrgIdOf(state, '/settings'), PERSONAL.id);
    const stranger = '00000000-0000-4000-8000-0000000000ff';
    assert.equal(currentOrgIdOf(state, `/orgs/${stranger}/members`), PERSONAL.id, 'not a member: the page says so, the choice stays');
    assert.equal(currentOrgIdOf({ currentOrg: PERSONAL.id }, `/orgs/${SHARED.id}`), SHARED.id, 'before the list arrives: the path');
    assert.equal(adminOfCurrent(state, '/account'), true, 'owner of the personal organization');
    assert.equal(adminOfCurrent(state, `/orgs/${SHARED.id}/members`), false, "a member of the path's organization");
    const members = orgs.nav!.find((n) => n.id === 'nav-org-members')!;
    assert.equal(members.path!(state as unknown as AppState, `/orgs/${SHARED.id}/webhooks`), `/orgs/${SHARED.id}/members`);
    assert.equal(members.path!(state as unknown as AppState, '/settings'), `/orgs/${PERSONAL.id}/members`);
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
        if (callOf(req) === 'GET /api/orgs') return answer({ organizations: verified ? [PERSONAL, SHARED] : [PERSONAL] });
        if (callOf(req) === 'POST /api/invitations/accept') {
          return verified ? answer(SHARED) : answer({ type: 'forbidden', reason: 'email-unverified', message: 'Verify first' }, 403);
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
    const accept = s.requests.find((r) => callOf(r) === 'POST /api/invitations/accept')!;
    assert.deepEqual(transitJson.decode(accept.body!), { token: 'tok-1' });

    verified = true;
    await s.run(['invitation/accept']);
    assert.equal(s.stored.get(PENDING_INVITATION_KEY), undefined);
    assert.equal(s.core.state.currentOrg, SHARED.id);
    assert.equal(s.navigated.at(-1), `/orgs/${SHARED.id}`);
  });

  it('forgets an invitation whose token cannot work any more', async () => {
    const s = setup('accept-invitation', () => answer({ type: 'invalid-token', message: 'invalid' }, 400), { stored: { [PENDING_INVITATION_KEY]: 'old' } });
    await s.run(['invitation/open', '']);
    assert.equal(s.core.state.invitationPage?.status, 'failed');
    assert.equal(s.stored.get(PENDING_INVITATION_KEY), undefined);
    assert.equal(s.core.state.pendingInvitation, undefined);
  });
});
