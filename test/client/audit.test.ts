/**
 * The audit log's client events against a fake transport: the route `/orgs/<id>/audit-log`, the
 * first page and "load more" with the server's cursor, a member's 403 and a non-member's 404 as
 * page states, and readable action names that leave an unknown action as it is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditActionLabel } from '../../src/client/audit/action-labels.js';
import { routeOf } from '../../src/client/app.js';
import { auditOrgIdOf, auditPath, registerAudit, type AuditEntry } from '../../src/client/audit/events.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { answer, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const entry = (id: number): AuditEntry => ({
  id: String(id),
  action: 'org.member-role-changed',
  actor: { 'account-id': null, 'api-key-id': null },
  target: null,
  ip: null,
  'user-agent': null,
  details: {},
  'created-at': '2026-01-01T00:00:00.000Z',
});

function setup(handler: (req: TransportRequest) => TransportResponse) {
  const client = fakeClient('org-audit', handler, { session: 'token' });
  registerAudit(client.core);
  return client;
}

describe('client audit log events', () => {
  it('routes /orgs/<id>/audit-log and reads the id', () => {
    assert.equal(routeOf(auditPath(ORG)), 'org-audit');
    assert.equal(routeOf(`/orgs/${ORG}`), 'org');
    assert.equal(auditOrgIdOf(`/orgs/${ORG}/audit-log`), ORG);
    assert.equal(auditOrgIdOf(`/orgs/${ORG}`), undefined);
  });

  it('loads the first page, then older ones with the cursor until there are none', async () => {
    const s = setup((req) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      return cursor === 'c1' ? answer({ entries: [entry(2), entry(1)], 'next-cursor': null }) : answer({ entries: [entry(4), entry(3)], 'next-cursor': 'c1' });
    });
    await s.run(['audit/open', ORG]);
    const first = new URL(s.requests[0].url, 'http://x');
    assert.equal(first.pathname, `/api/orgs/${ORG}/audit-log`);
    assert.equal(first.searchParams.get('limit'), '50');
    assert.equal(s.requests[0].headers.authorization, 'Bearer access-1');
    assert.deepEqual(
      s.core.state.auditPage?.entries.map((e) => e.id),
      ['4', '3'],
    );
    assert.equal(s.core.state.auditPage?.nextCursor, 'c1');
    await s.run(['audit/more']);
    assert.deepEqual(
      s.core.state.auditPage?.entries.map((e) => e.id),
      ['4', '3', '2', '1'],
    );
    assert.equal(s.core.state.auditPage?.nextCursor, null);
    await s.run(['audit/more']);
    assert.equal(s.requests.length, 2, 'nothing more to ask for');
  });

  it('tells a member (403) and a non-member (404) apart from a failure', async () => {
    const member = setup(() => answer({ type: 'forbidden', message: 'admins only', 'required-role': 'admin', role: 'member' }, 403));
    await member.run(['audit/open', ORG]);
    assert.equal(member.core.state.auditPage?.status, 'forbidden');
    assert.deepEqual(member.core.state.toasts, [], 'the page says it; no toast');
    const outsider = setup(() => answer({ type: 'not-found', message: 'No such organization' }, 404));
    await outsider.run(['audit/open', ORG]);
    assert.equal(outsider.core.state.auditPage?.status, 'missing');
    const broken = setup(() => answer({ type: 'exception', message: 'Internal server error' }, 500));
    await broken.run(['audit/open', ORG]);
    assert.equal(broken.core.state.auditPage?.status, 'failed');
    assert.equal(broken.core.state.toasts.length, 1);
  });

  it('names known actions and shows an unknown one as it is', () => {
    assert.equal(auditActionLabel('org.member-role-changed'), 'Member role changed');
    assert.equal(auditActionLabel('billing.something-new'), 'billing.something-new');
    assert.equal(auditActionLabel('constructor'), 'constructor');
  });
});
