/**
 * The audit trail's client parts against a fake transport: the filters as the page's query
 * string (the form's fields in UTC, a link read back into the form), the log opened and paged
 * with them, a filter change as a navigation, a refused filter beside its field; the export
 * fetched with the bearer token (the file named by the answer, a 401 refreshed once, a refusal's
 * message); the streams page's events (a flat create body, the https secret kept once, a field
 * error, pause and a test's outcome, a refused test).
 */
// the form's datetime-local values are read in the reader's zone: one with an offset, fixed here
process.env.TZ = 'America/New_York';

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { routeOf } from '../../src/client/app.js';
import { auditPath, FILTER_FORM, registerAudit } from '../../src/client/audit/events.js';
import { fileNameOf, registerAuditExport } from '../../src/client/audit/export.js';
import { filterQuery, localInput, queryOfForm } from '../../src/client/audit/filters.js';
import { registerAuditStreams, STREAM_FORM, streamsOrgIdOf, streamsPath, type AuditStream } from '../../src/client/audit/streams-events.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const SID = '00000000-0000-4000-8000-0000000000aa';
const url = (r: TransportRequest) => new URL(r.url, 'http://x');

function setup(handler: (req: TransportRequest) => TransportResponse | undefined, route = 'org-audit') {
  const client = fakeClient(route, handler);
  const downloads: Array<{ filename: string; type: string; text: string | Blob }> = [];
  registerAudit(client.core);
  registerAuditExport(client.core, { download: (file) => downloads.push(file) });
  registerAuditStreams(client.core);
  return { ...client, downloads };
}

const stream = (over: Partial<AuditStream> = {}): AuditStream => ({
  id: SID,
  kind: 'https',
  status: 'active',
  'paused-reason': null,
  url: 'https://siem.example.com/in',
  'created-at': '2026-01-01T00:00:00.000Z',
  'last-delivered-at': null,
  lag: 3,
  'last-error': null,
  'failing-since': null,
  ...over,
});

describe('the audit log filters as a query string', () => {
  it('keeps only the filters, in order, and drops empty ones', () => {
    assert.equal(
      filterQuery('?action=a.b&limit=5&actor-id=&from=2026-01-01T00%3A00%3A00.000Z&action=c.d'),
      'action=a.b&from=2026-01-01T00%3A00%3A00.000Z&action=c.d',
    );
    assert.equal(filterQuery(''), '');
  });

  it("reads the form: ticked and typed actions once each, the period from the reader's zone in UTC", () => {
    const data = new FormData();
    data.append('action', 'org.member-removed');
    data.append('action', 'test.imported, org.member-removed  other.thing');
    data.append('actor-id', ' 7d1a3c1e-1111-4c1e-9a3b-000000000001 ');
    data.append('target-type', '');
    data.append('from', '2026-03-01T10:00');
    data.append('to', '2026-07-01T10:00');
    const q = new URLSearchParams(queryOfForm(data));
    assert.deepEqual(q.getAll('action'), ['org.member-removed', 'test.imported', 'other.thing']);
    assert.equal(q.get('actor-id'), '7d1a3c1e-1111-4c1e-9a3b-000000000001');
    assert.equal(q.has('target-type'), false);
    assert.equal(q.get('from'), '2026-03-01T15:00:00.000Z', 'EST is UTC-5');
    assert.equal(q.get('to'), '2026-07-01T14:00:00.000Z', 'EDT is UTC-4');
    // and back into the inputs, in the same zone
    assert.equal(localInput('2026-03-01T15:00:00.000Z'), '2026-03-01T10:00');
    assert.equal(localInput('not a date'), '');
    assert.equal(localInput(null), '');
  });
});

describe('client audit log with filters', () => {
  it('opens with the filters of the search, pages with them, and drops an answer for other filters', async () => {
    const s = setup((req) =>
      url(req).searchParams.get('cursor') === 'c1'
        ? answer({ entries: [{ id: '1', action: 'org.member-removed', actor: {}, target: null, details: {} }], 'next-cursor': null })
        : answer({ entries: [{ id: '2', action: 'org.member-removed', actor: {}, target: null, details: {} }], 'next-cursor': 'c1' }),
    );
    await s.run(['audit/open', ORG, '?action=org.member-removed&action=org.member-left&from=2026-01-01T00%3A00%3A00.000Z&junk=1']);
    const first = url(s.requests[0]);
    assert.equal(first.pathname, `/api/orgs/${ORG}/audit-log`);
    assert.deepEqual(first.searchParams.getAll('action'), ['org.member-removed', 'org.member-left']);
    assert.equal(first.searchParams.get('from'), '2026-01-01T00:00:00.000Z');
    assert.equal(first.searchParams.get('limit'), '50');
    assert.equal(first.searchParams.has('junk'), false);
    await s.run(['audit/more']);
    const more = url(s.requests[1]);
    assert.equal(more.searchParams.get('cursor'), 'c1');
    assert.deepEqual(more.searchParams.getAll('action'), ['org.member-removed', 'org.member-left'], '"load more" keeps the filters');
    assert.deepEqual(
      s.core.state.auditPage?.entries.map((e) => e.id),
      ['2', '1'],
    );
    s.core.dispatch(['audit/loaded', ORG, 'action=other.one', { entries: [{ id: '9' }], 'next-cursor': null }]);
    await s.run(['audit/more'], 5);
    assert.equal(s.core.state.auditPage?.entries.length, 2, 'an answer for other filters is dropped');
  });

  it('applies filters by navigating to their query; the same filters again reload in place', async () => {
    const s = setup(() => answer({ entries: [], 'next-cursor': null }));
    const formKey = () => s.core.state.auditPage?.formKey;
    await s.run(['audit/open', ORG, '']);
    const first = formKey();
    await s.run(['audit/filter', 'action=org.created&to=2026-02-01T00%3A00%3A00.000Z', true]);
    assert.deepEqual(s.navigated, [auditPath(ORG, 'action=org.created&to=2026-02-01T00%3A00%3A00.000Z')]);
    assert.equal(routeOf(s.navigated[0].split('?')[0]), 'org-audit');
    await s.run(['audit/open', ORG, '?action=org.created&to=2026-02-01T00%3A00%3A00.000Z']);
    assert.equal(formKey(), first, "the form's own filters keep the form (and its focus)");
    const before = s.requests.length;
    await s.run(['audit/filter', 'action=org.created&to=2026-02-01T00%3A00%3A00.000Z', true]);
    assert.equal(s.navigated.length, 1, 'no second history entry');
    assert.equal(s.requests.length, before + 1, 'the first page again');
    assert.equal(formKey(), first);
    // Back to no filters, or Clear: the form is made again from the query
    await s.run(['audit/open', ORG, '']);
    assert.notEqual(formKey(), first);
    const back = formKey();
    await s.run(['audit/filter', 'action=org.created', true]);
    await s.run(['audit/open', ORG, '?action=org.created']);
    await s.run(['audit/filter', '']);
    await s.run(['audit/open', ORG, '']);
    assert.notEqual(formKey(), back, 'Clear empties the form');
  });

  it('shows a refused filter beside its field, not as a toast, and clears it on the next open', async () => {
    const s = setup((req) =>
      url(req).searchParams.has('to')
        ? answer({ type: 'request-coercion', message: 'Invalid query', in: 'query', errors: [{ path: '/to', message: 'must be later than from' }] }, 400)
        : answer({ entries: [], 'next-cursor': null }),
    );
    await s.run(['audit/open', ORG, '?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z']);
    assert.equal(s.core.state.auditPage?.status, 'invalid');
    assert.deepEqual(s.core.state.fieldErrors?.[FILTER_FORM], { to: 'must be later than from' });
    assert.deepEqual(s.core.state.toasts, []);
    await s.run(['audit/open', ORG, '?from=2026-02-01T00:00:00Z']);
    assert.equal(s.core.state.auditPage?.status, 'ready');
    assert.equal(s.core.state.fieldErrors?.[FILTER_FORM], undefined);
  });
});

describe('client audit log export', () => {
  const realFetch = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it('names the file as the answer does', () => {
    assert.equal(fileNameOf('attachment; filename="audit-log-x-all-20260101T000000Z.csv"'), 'audit-log-x-all-20260101T000000Z.csv');
    assert.equal(fileNameOf(null), undefined);
  });

  it('fetches the export with the filters and the bearer token, and offers the file', async () => {
    const asked: Array<{ url: string; authorization: string | null }> = [];
    globalThis.fetch = (async (input: string, init?: RequestInit) => {
      asked.push({ url: input, authorization: new Headers(init?.headers).get('authorization') });
      return new Response('id,created-at\r\n1,2026\r\n', {
        headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="audit-log-o-all-now.csv"' },
      });
    }) as typeof fetch;
    const s = setup(() => answer({ entries: [], 'next-cursor': null }));
    await s.run(['audit/open', ORG, '?action=org.created&action=org.renamed']);
    await s.run(['audit/export', 'csv']);
    assert.equal(asked.length, 1);
    const exported = new URL(asked[0].url, 'http://x');
    assert.equal(exported.pathname, `/api/orgs/${ORG}/audit-log/export`);
    assert.equal(exported.searchParams.get('format'), 'csv');
    assert.deepEqual(exported.searchParams.getAll('action'), ['org.created', 'org.renamed']);
    assert.equal(asked[0].authorization, 'Bearer access-1');
    assert.equal(s.downloads.length, 1);
    assert.equal(s.downloads[0].filename, 'audit-log-o-all-now.csv');
    assert.equal(s.downloads[0].type, 'text/csv; charset=utf-8');
    assert.equal(await (s.downloads[0].text as Blob).text(), 'id,created-at\r\n1,2026\r\n');
    assert.equal(s.core.state.auditExport, undefined, 'done');
  });

  it('refreshes an expired token once and asks again; a refusal is shown with its message', async () => {
    const tokens: Array<string | null> = [];
    globalThis.fetch = (async (_input: string, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get('authorization');
      tokens.push(auth);
      if (auth === 'Bearer access-1') return new Response('{"type":"unauthorized"}', { status: 401 });
      return new Response(JSON.stringify({ type: 'forbidden', message: 'Only admins export' }), {
        status: 403,
        headers: { 'content-type': 'application/json' },
      });
    }) as typeof fetch;
    const s = setup((req) =>
      callOf(req) === 'POST /api/account/refresh' ? answer({ 'access-token': 'access-2' }) : answer({ entries: [], 'next-cursor': null }),
    );
    await s.run(['audit/open', ORG, '']);
    await s.run(['audit/export', 'ndjson'], 60);
    assert.deepEqual(tokens, ['Bearer access-1', 'Bearer access-2'], 'one refresh, one retry');
    assert.deepEqual(s.core.state.auditExport, { orgId: ORG, error: 'Only admins export' });
    assert.equal(s.downloads.length, 0);
  });
});

describe('client audit log streams', () => {
  it('routes /orgs/<id>/audit-log/streams and reads the id', () => {
    assert.equal(routeOf(streamsPath(ORG)), 'org-audit-streams');
    assert.equal(streamsOrgIdOf(streamsPath(ORG)), ORG);
    assert.equal(streamsOrgIdOf(auditPath(ORG)), undefined);
    assert.equal(routeOf(auditPath(ORG)), 'org-audit');
  });

  it('creates a stream with a flat body and keeps an https secret for this visit only', async () => {
    let list: AuditStream[] = [];
    const s = setup((req) => {
      if (callOf(req) === `POST /api/orgs/${ORG}/audit-log/streams`) {
        const https = /"~:kind","https"/.test(req.body ?? '');
        const made = https ? stream() : stream({ id: `${SID.slice(0, -2)}bb`, kind: 's3', url: undefined, bucket: 'logs', region: 'eu-west-1' });
        list = [...list, made];
        return answer(https ? { ...made, secret: 'whsec_abc' } : made, 201);
      }
      return answer({ streams: list });
    }, 'org-audit-streams');
    await s.run(['streams/open', ORG]);
    assert.deepEqual(s.core.state.auditStreams?.streams, []);
    await s.run([
      'streams/create',
      { kind: 's3', bucket: 'logs', region: 'eu-west-1', 'force-path-style': 'on', 'access-key-id': 'AK', 'secret-access-key': 'SK' },
    ]);
    assert.equal(s.requests[1].headers['content-type'], 'application/transit+json');
    assert.match(s.requests[1].body ?? '', /"~:kind","s3"/);
    assert.match(s.requests[1].body ?? '', /"~:force-path-style",true/, 'a ticked box is a boolean');
    assert.equal(s.core.state.auditStreams?.secret, undefined, 'no secret but for https');
    await s.run(['streams/create', { kind: 'https', url: 'https://siem.example.com/in' }]);
    assert.deepEqual(s.core.state.auditStreams?.secret, { id: SID, value: 'whsec_abc' });
    assert.equal(s.core.state.auditStreams?.streams?.length, 2, 'the list is loaded again');
    assert.equal(s.core.state.auditStreams?.formResets, 2, 'the form clears');
    await s.run(['streams/hide-secret']);
    assert.equal(s.core.state.auditStreams?.secret, undefined);
    await s.run(['streams/create', { kind: 'https', url: 'https://siem.example.com/in' }]);
    await s.run(['streams/open', ORG]);
    assert.equal(s.core.state.auditStreams?.secret, undefined, 'a new visit forgets it');
  });

  it("shows a refused field beside it; a member's 403 and a non-member's 404 are the page's state", async () => {
    const s = setup((req) =>
      req.method === 'POST'
        ? answer(
            { type: 'request-coercion', message: 'Invalid body', in: 'body', errors: [{ path: '/url', message: 'must not be a link-local address' }] },
            400,
          )
        : answer({ streams: [] }),
    );
    await s.run(['streams/open', ORG]);
    await s.run(['streams/create', { kind: 'https', url: 'http://169.254.169.254/' }]);
    assert.deepEqual(s.core.state.fieldErrors?.[STREAM_FORM], { url: 'must not be a link-local address' });
    assert.equal(s.core.state.busy, false);
    assert.deepEqual(s.core.state.toasts, []);
    const member = setup(() => answer({ type: 'forbidden', message: 'admins only' }, 403));
    await member.run(['streams/open', ORG]);
    assert.equal(member.core.state.auditStreams?.status, 'forbidden');
    const outsider = setup(() => answer({ type: 'not-found', message: 'No such organization' }, 404));
    await outsider.run(['streams/open', ORG]);
    assert.equal(outsider.core.state.auditStreams?.status, 'missing');
  });

  it("pauses a stream, and shows a test's outcome on it; a refused test is a toast", async () => {
    let status: AuditStream['status'] = 'active';
    let tests = 0;
    const s = setup((req) => {
      const call = callOf(req);
      if (call.endsWith('/pause')) {
        status = 'paused';
        return answer(stream({ status, 'paused-reason': 'manual' }));
      }
      if (call.endsWith('/test')) {
        return ++tests === 1
          ? answer({ delivered: false, 'status-code': 500, error: 'unexpected-status', 'duration-ms': 12 })
          : answer({ type: 'rate-limited', message: 'Too many tests' }, 429);
      }
      return answer({ streams: [stream({ status })] });
    }, 'org-audit-streams');
    await s.run(['streams/open', ORG]);
    await s.run(['streams/act', SID, 'pause']);
    assert.equal(callOf(s.requests[1]), `POST /api/orgs/${ORG}/audit-log/streams/${SID}/pause`);
    assert.equal(s.core.state.auditStreams?.streams?.[0].status, 'paused');
    assert.equal(s.core.state.busy, false);
    s.core.dispatchSync(['streams/act', SID, 'test']);
    assert.equal(s.core.state.auditStreams?.tests[SID], null, 'under way');
    await s.run(['streams/load', ORG]);
    assert.deepEqual(s.core.state.auditStreams?.tests[SID], { delivered: false, 'status-code': 500, error: 'unexpected-status', 'duration-ms': 12 });
    const toasts = s.core.state.toasts.length;
    await s.run(['streams/act', SID, 'test']);
    assert.equal(SID in (s.core.state.auditStreams?.tests ?? {}), false, 'no outcome for a refused test');
    assert.equal(s.core.state.toasts.length, toasts + 1);
    assert.match(s.core.state.toasts.at(-1)?.message ?? '', /Too many tests/);
  });
});
