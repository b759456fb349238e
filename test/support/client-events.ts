/**
 * Test support for the client's events against a fake transport: a signed-in account, answers in
 * the client's own format (Transit), a request's method and path, and the app's events on one
 * core whose requests and navigations are recorded.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { registerApp, type Account, type AppState, type Route } from '../../src/client/app.js';
import { EventCore, type EventVector } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import type { UploadSender } from '../../src/client/upload.js';
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

export interface FakeClientOptions {
  /**
   * `account` (default): an access token and `account` (default {@link ACCOUNT}); `token`: an
   * access token before the account is known; `none`: signed out.
   */
  session?: 'account' | 'token' | 'none';
  account?: Account;
  /** sends an upload's bytes (`upload/send`); none: no test sends any */
  uploadSender?: UploadSender;
}

/**
 * The app's events on one core at `route`, its requests answered by `respond` (a 404 where it
 * answers nothing) and recorded, its navigations recorded; `later` does nothing (toasts dismiss
 * themselves after seconds; not here). The caller registers the feature under test on `core`.
 */
export function fakeClient(route: Route, respond: (req: TransportRequest) => TransportResponse | undefined, options: FakeClientOptions = {}) {
  const { session = 'account', account = ACCOUNT } = options;
  const requests: TransportRequest[] = [];
  const navigated: string[] = [];
  const signedIn = session === 'account' ? { token: 'access-1', account } : session === 'token' ? { token: 'access-1' } : {};
  const core = new EventCore<AppState>({ route, toasts: [], busy: false, ready: true, locale: 'en', ...signedIn });
  registerApp(
    core,
    {
      transport: async (req) => {
        requests.push(req);
        return respond(req) ?? answer({ type: 'not-found', message: 'no such route' }, 404);
      },
      csrfToken: () => 'csrf-1',
      uploadSender: options.uploadSender,
    },
    (path) => navigated.push(path),
  );
  core.regFx('later', () => undefined);
  /** Dispatches `event` and waits `wait` ms for its requests and their answers. */
  const run = async (event: EventVector, wait = 30) => {
    core.dispatch(event);
    await sleep(wait);
  };
  return { core, requests, navigated, run };
}
