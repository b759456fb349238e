/**
 * The usage page's client events against a fake transport: the route `/orgs/<id>/usage`, the
 * organization's usage loaded into the page's state, and a non-member's 404 as the page state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeOf } from '../../src/client/app.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { registerUsage, usageOrgIdOf, usagePath, type OrganizationUsage } from '../../src/client/usage/events.js';
import { answer, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const USAGE: OrganizationUsage = {
  plan: 'free',
  period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
  seats: { used: 2, included: 2, max: 3 },
  meters: [
    {
      meter: 'api-calls',
      name: 'API calls',
      used: 4,
      soft: 3,
      hard: 5,
      daily: [
        { date: '2026-11-01', used: 1 },
        { date: '2026-11-02', used: 3 },
      ],
    },
  ],
};

function setup(handler: (req: TransportRequest) => TransportResponse) {
  const client = fakeClient('org-usage', handler, { session: 'token' });
  registerUsage(client.core);
  return client;
}

describe('client usage events', () => {
  it('routes /orgs/<id>/usage and reads the id', () => {
    assert.equal(routeOf(usagePath(ORG)), 'org-usage');
    assert.equal(usageOrgIdOf(`/orgs/${ORG}/usage`), ORG);
    assert.equal(usageOrgIdOf(`/orgs/${ORG}`), undefined);
  });

  it("loads the organization's usage into the page", async () => {
    const { core, requests, run } = setup(() => answer(USAGE));
    await run(['usage/open', ORG]);
    assert.match(requests[0].url, new RegExp(`/api/orgs/${ORG}/usage$`));
    assert.deepEqual(core.state.usagePage, { orgId: ORG, status: 'ready', usage: USAGE });
  });

  it("shows a non-member's 404 as a missing organization", async () => {
    const { core, run } = setup(() => answer({ type: 'not-found', message: 'No such organization' }, 404));
    await run(['usage/open', ORG]);
    assert.equal(core.state.usagePage?.status, 'missing');
  });
});
