import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { browserSession, cookiesOf, logIn, PASSWORD, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request with its request-target exactly as given (no URL normalisation), over a socket of its own. */
function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string>, body = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    'Accept: application/json',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: rest.join('\r\n\r\n') });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

/** Spellings of `/api/...` that a router may take for it while a prefix test on the raw URL does not. */
function variants(path: string, baseUrl: string): string[] {
  const segments = path.split('/').slice(1);
  const encoded = segments.map((_, i) => '/' + segments.map((s, j) => (j === i ? `%${s.charCodeAt(0).toString(16)}${s.slice(1)}` : s)).join('/'));
  const { host } = new URL(baseUrl);
  return [...encoded, `/${path}`, `http://${host}${path}`, `http://${host}/%61pi${path.slice(4)}`, `${path.toUpperCase()}`];
}

describe('Security decisions follow the matched route, not the raw URL', () => {
  let t: TestSystem;
  let protectedRoutes: Array<{ method: string; path: string }>;
  before(async () => {
    t = await startSystem(testDatabases()[0], {
      LOGIN_LIMIT_EMAIL: '0',
      LOGIN_LIMIT_ADDRESS: '0',
      APP_URL: 'https://app.example',
      ALLOWED_ORIGINS: 'https://admin.example',
    });
    // every unsafe API operation the app documents, except those that opt out of CSRF (the webhook, the SAML ACS)
    const doc = JSON.parse((await t.client('GET', '/openapi/openapi.json')).text) as { paths: Record<string, Record<string, unknown>> };
    protectedRoutes = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
          .map((m) => ({ method: m.toUpperCase(), path })),
      )
      .filter((r) => r.path.startsWith('/api/') && !r.path.startsWith('/api/webhooks/') && !/^\/api\/sso\/saml\/[^/]+\/acs$/.test(r.path));
    assert.ok(protectedRoutes.length >= 5, JSON.stringify(protectedRoutes));
  });
  after(async () => t?.stop());

  it('refuses every spelling of every protected route that carries cookies without a CSRF token, with API headers', async () => {
    const { email } = await signUp(t.client);
    const login = await logIn(t.client, email);
    const browser = await browserSession(t.client);
    const cookie = `${browser.cookie}; refresh-token=${cookiesOf(login)['refresh-token'].value}`;
    for (const { method, path } of protectedRoutes) {
      for (const target of variants(path, t.url)) {
        const res = await rawRequest(t.url, method, target, { cookie, 'content-type': 'application/json' }, '{}');
        if (process.env.SHOW_STATUS) console.log(res.status, method, target);
        assert.ok(res.status === 403 || res.status === 404, `${method} ${target} answered ${res.status}: ${res.body}`);
        assert.equal(res.headers['cache-control'], 'no-store', `${method} ${target}`);
        assert.ok(!res.headers['set-cookie']?.includes('refresh-token='), `${method} ${target} set a refresh cookie`);
      }
    }
    // the refresh token is still good: none of the above used it
    const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': login.body['refresh-token'] } });
    assert.equal(refreshed.status, 200);
  });

  it('applies the JWT middleware and the API headers to a percent-encoded API path', async () => {
    const { email } = await signUp(t.client);
    const token = (await logIn(t.client, email)).body['access-token'];
    const me = await rawRequest(t.url, 'GET', '/%61pi/account/me', { authorization: `Bearer ${token}` });
    assert.equal(me.status, 200, me.body);
    assert.equal(JSON.parse(me.body).email, email);
    const login = await rawRequest(
      t.url,
      'POST',
      '/%61pi/account/log-in',
      { 'content-type': 'application/json' },
      JSON.stringify({ email, password: PASSWORD }),
    );
    assert.equal(login.status, 200, login.body);
    assert.equal(login.headers['cache-control'], 'no-store');
    assert.equal(login.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  });

  it('answers an unknown /api path with the API headers and no credentials', async () => {
    const res = await rawRequest(t.url, 'POST', '/api/account/nothing-here', { 'content-type': 'application/json' }, '{}');
    assert.equal(res.status, 404);
    assert.equal(res.headers['cache-control'], 'no-store');
  });
});

describe('Unsafe API requests from another origin', () => {
  let t: TestSystem;
  let email: string;
  before(async () => {
    t = await startSystem(testDatabases()[0], {
      LOGIN_LIMIT_EMAIL: '0',
      LOGIN_LIMIT_ADDRESS: '0',
      APP_URL: 'https://app.example',
      ALLOWED_ORIGINS: 'https://admin.example',
    });
    email = (await signUp(t.client)).email;
  });
  after(async () => t?.stop());

  /** A log-in as a cross-origin HTML form would send it (no Sec-Fetch-Site: an older browser). */
  const formLogIn = (headers: Record<string, string>) =>
    t.client('POST', '/api/account/log-in', {
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });

  it('refuses log-in CSRF by Origin, by Referer, and from an opaque origin, setting no cookie', async () => {
    for (const headers of <Array<Record<string, string>>>[
      { origin: 'https://evil.example' },
      { referer: 'https://evil.example/login.html' },
      { origin: 'null' },
      { origin: 'https://app.example.evil.example' },
      { referer: 'not a url' },
    ]) {
      const res = await formLogIn(headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.body.type, 'forbidden');
      assert.equal(res.body.reason, 'origin');
      assert.equal(res.headers['set-cookie'], undefined, JSON.stringify(headers));
    }
    const signUpFromEvil = await t.client('POST', '/api/account/sign-up', {
      headers: { origin: 'https://evil.example' },
      body: { email: `x${email}`, password: PASSWORD },
    });
    assert.equal(signUpFromEvil.status, 403);
  });

  it("takes the app's own origin (APP_URL, ALLOWED_ORIGINS, the Host it was sent to) and requests without one", async () => {
    const host = new URL(t.url).host;
    for (const headers of <Array<Record<string, string>>>[
      { origin: 'https://app.example' },
      { origin: 'https://admin.example' },
      { referer: 'https://app.example/account' },
      { origin: `http://${host}` },
      {},
    ]) {
      const res = await formLogIn(headers);
      assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${res.text}`);
    }
  });

  it('leaves the webhook to its signature', async () => {
    const res = await t.client('POST', '/api/webhooks/stripe', { headers: { origin: 'https://evil.example', 'stripe-signature': 't=1,v1=00' }, body: '{}' });
    assert.equal(res.status, 400);
    assert.equal(res.body.type, 'invalid-signature');
  });
});
