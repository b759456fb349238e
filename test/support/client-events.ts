/**
 * Test support for the client's events against a fake transport: a signed-in account, answers in
 * the client's own format (Transit), and a request's method and path.
 */
import type { Account } from '../../src/client/app.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { transitJson } from '../../src/shared/codecs.js';

export const ACCOUNT: Account = {
  id: '7d1a3c1e-1111-4c1e-9a3b-000000000001',
  email: 'ada@example.test',
  name: 'Ada',
  'created-at': '2026-01-01T00:00:00.000Z',
  subscription: { status: 'none', plan: null, 'current-period-end': null },
  'email-verified': true,
};

/** An answer of `status` carrying `body` as the server sends it to the client. */
export const answer = (body: unknown, status = 200): TransportResponse => ({ status, contentType: transitJson.mime, text: transitJson.encode(body) });

/** `DELETE /api/orgs/…`: a request's method and path, to switch on or compare. */
export const callOf = (r: TransportRequest) => `${r.method} ${new URL(r.url, 'http://x').pathname}`;
