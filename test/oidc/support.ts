/**
 * Provider sign-in over HTTP in tests: a system with three providers (a real OpenID provider
 * `acme`, a GitHub `github`, and `down`, whose issuer answers nothing), and the browser's part
 * of a flow (start, the provider, the callback with the flow cookie).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cookiesOf } from '../support/auth.js';
import type { TestResponse } from '../support/http.js';
import { freePort } from '../support/net.js';
import { startSystem, type TestDatabase, type TestSystem } from '../support/system.js';
import { FlowCookies, type FlowState } from '../../src/oidc/flow-cookie.js';
import { startFakeGitHub, type FakeGitHub } from './github.js';
import { startTestProvider, type TestProvider } from './provider.js';

export interface OidcWorld {
  t: TestSystem;
  op: TestProvider;
  gh: FakeGitHub;
  appUrl: string;
  /** the port the `down` provider's issuer names, where nothing listens */
  downPort: number;
  /** every secret the flows saw (codes, flow cookies, verifiers, client secrets, refresh tokens): none may be logged */
  secrets: Set<string>;
  stop(): Promise<void>;
}

export async function startOidcWorld(db: TestDatabase, env: Record<string, string> = {}): Promise<OidcWorld> {
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  const op = await startTestProvider({ redirectUris: [`${appUrl}/api/auth/oauth/acme/callback`] });
  const gh = await startFakeGitHub();
  const downPort = await freePort();
  const t = await startSystem(db, {
    PORT: String(port),
    APP_URL: appUrl,
    OIDC_PROVIDERS: 'acme,github,down',
    OIDC_ACME_ISSUER: op.issuer,
    OIDC_ACME_CLIENT_ID: op.clientId,
    OIDC_ACME_CLIENT_SECRET: op.clientSecret,
    OIDC_GITHUB_ISSUER: gh.baseUrl,
    OIDC_GITHUB_CLIENT_ID: gh.clientId,
    OIDC_GITHUB_CLIENT_SECRET: gh.clientSecret,
    OIDC_DOWN_ISSUER: `http://127.0.0.1:${downPort}`,
    OIDC_DOWN_CLIENT_ID: 'down-client',
    OIDC_DOWN_CLIENT_SECRET: 'down-secret-value-never-logged',
    LOG_LEVELS: 'saas.*=debug',
    ...env,
  });
  return {
    t,
    op,
    gh,
    appUrl,
    downPort,
    secrets: new Set([op.clientSecret, gh.clientSecret, 'down-secret-value-never-logged']),
    async stop() {
      await t.stop();
      await op.stop();
      await gh.stop();
    },
  };
}

export interface StartedFlow {
  res: TestResponse;
  /** the provider's authorization URL */
  location: URL;
  /** the flow cookie's value */
  cookie: string;
}

/** `GET /api/auth/oauth/<provider>/start` (or a link's POST answer) as a browser makes it. */
export async function startFlow(w: OidcWorld, provider = 'acme', query = ''): Promise<StartedFlow> {
  const res = await w.t.client('GET', `/api/auth/oauth/${provider}/start${query}`);
  assert.equal(res.status, 302, res.text);
  return flowOf(w, res, String(res.headers.location));
}

export function flowOf(w: OidcWorld, res: TestResponse, location: string): StartedFlow {
  const cookie = cookiesOf(res)['oauth-flow']?.value;
  assert.ok(cookie, 'the start sets the flow cookie');
  w.secrets.add(cookie);
  return { res, location: new URL(location), cookie };
}

/** The flow cookie's contents, as the server reads them (the tests know SESSION_SECRET). */
export async function openFlow(w: OidcWorld, cookie: string): Promise<FlowState> {
  const flow = await new FlowCookies(w.t.system.config.sessionSecret, false).open(cookie);
  assert.ok(flow, "the flow cookie opens with the server's key");
  w.secrets.add(flow.codeVerifier);
  return flow;
}

/** The callback as the browser comes back to it: the provider's redirect, with the flow cookie (when given). */
export async function callback(w: OidcWorld, back: URL, cookie: string | undefined): Promise<TestResponse> {
  assert.equal(back.origin, w.appUrl, `the provider sends the browser back to the app: ${back.href}`);
  const code = back.searchParams.get('code');
  if (code) w.secrets.add(code);
  const res = await w.t.client('GET', back.pathname + back.search, cookie ? { headers: { cookie: `oauth-flow=${cookie}` } } : {});
  assert.equal(res.status, 302, res.text);
  const refresh = cookiesOf(res)['refresh-token']?.value;
  if (refresh) w.secrets.add(refresh);
  return res;
}

/** A whole sign-in at `acme` as `login`: start, the provider's login page, the callback. */
export async function signInWithAcme(w: OidcWorld, login: string, query = ''): Promise<TestResponse> {
  const flow = await startFlow(w, 'acme', query);
  return callback(w, await w.op.authorize(flow.location.href, login), flow.cookie);
}

/** A whole sign-in at the fake GitHub as whoever is signed in there. */
export async function signInWithGitHub(w: OidcWorld): Promise<TestResponse> {
  const flow = await startFlow(w, 'github');
  const res = await fetch(flow.location, { redirect: 'manual' });
  await res.arrayBuffer();
  return callback(w, new URL(res.headers.get('location') ?? ''), flow.cookie);
}

/** Where a callback sent the browser: the path, and the query as a map. */
export function landing(w: OidcWorld, res: TestResponse): { path: string; query: Record<string, string> } {
  const url = new URL(String(res.headers.location));
  assert.equal(url.origin, w.appUrl, 'into the app, never elsewhere');
  return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
}

/** The session a callback started: its refresh cookie exchanged for an access token (the client's first request). */
export async function sessionOf(
  w: OidcWorld,
  res: TestResponse,
): Promise<{ token: string; refreshToken: string; account: { id: string; email: string; name: string | null; 'email-verified': boolean } }> {
  const refresh = cookiesOf(res)['refresh-token']?.value;
  assert.ok(refresh, 'the callback sets the refresh cookie');
  assert.equal(cookiesOf(res)['has-session']?.value, '1', 'and the session hint');
  const r = await w.t.client('POST', '/api/account/refresh', { body: { 'refresh-token': refresh } });
  assert.equal(r.status, 200, r.text);
  w.secrets.add(r.body['refresh-token']);
  w.secrets.add(r.body['access-token']);
  return { token: r.body['access-token'], refreshToken: r.body['refresh-token'], account: r.body.account };
}

/** An authorization URL made by hand at the provider (what an attacker could do), for the app's client. */
export function handmadeAuthorization(w: OidcWorld, params: Record<string, string>): string {
  const url = new URL(w.op.authorizationEndpoint);
  url.search = new URLSearchParams({
    client_id: w.op.clientId,
    redirect_uri: `${w.appUrl}/api/auth/oauth/acme/callback`,
    response_type: 'code',
    scope: 'openid email profile',
    ...params,
  }).toString();
  return url.href;
}

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The audit entries about an account, oldest first. */
export async function auditOf(w: OidcWorld, accountId: string) {
  return w.t.system.database.db.selectFrom('audit_entry').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}
