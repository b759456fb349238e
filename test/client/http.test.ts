import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { edn, json, transitJson } from '../../src/shared/codecs.js';
import { EventCore, type EventVector } from '../../src/client/core.js';
import { installHttp, type HttpOptions, type TransportRequest, type TransportResponse } from '../../src/client/http.js';

type Handler = (req: TransportRequest) => TransportResponse | Promise<TransportResponse>;

/** A core with the http effects on a fake transport, recording requests and dispatched events. */
function setup(handler: Handler, token = 'old-token') {
  const requests: TransportRequest[] = [];
  const events: EventVector[] = [];
  const core = new EventCore<{ token?: string }>({ token });
  for (const name of ['ok', 'ok2', 'fail', 'fail2', 'router/navigate'])
    core.regEvent(name, (_ctx, e) => {
      events.push(e);
    });
  core.regEvent('run', (_ctx, [, fx, opts]) => ({ [fx as string]: opts }));
  installHttp(core, {
    transport: async (req) => {
      requests.push(req);
      return handler(req);
    },
    csrfToken: () => 'csrf-123',
    getToken: () => core.state.token,
    setToken: (t) => {
      core.state.token = t;
    },
    timeoutMs: 200,
  });
  const run = async (fx: string, opts: HttpOptions, wait = 30) => {
    core.dispatch(['run', fx, opts]);
    await sleep(wait);
  };
  return { core, requests, events, run };
}

const transitOk = (body: unknown, status = 200): TransportResponse => ({ status, contentType: transitJson.mime, text: transitJson.encode(body) });

describe('client request layer', () => {
  it('turns a keyword URL into an API path and a path into itself', async () => {
    const { requests, run } = setup(() => transitOk({}));
    await run('http/api', { url: 'account/me' });
    await run('http/api', { url: ':account/me' });
    await run('http/api', { url: '/api/health' });
    assert.deepEqual(
      requests.map((r) => r.url),
      ['/api/account/me', '/api/account/me', '/api/health'],
    );
  });

  it('encodes the body and asks for the response in every content type (transit-json by default)', async () => {
    const body = { email: 'a@b.c', 'query/kind': 'account/me', n: 1 };
    const expected: Record<string, [string, string]> = {
      'transit-json': [transitJson.mime, transitJson.encode(body)],
      json: [json.mime, JSON.stringify(body)],
      edn: [edn.mime, edn.encode(body)],
      'form-encoded': ['application/x-www-form-urlencoded', 'email=a%40b.c&query%2Fkind=account%2Fme&n=1'],
      text: ['text/plain', '[object Object]'],
      html: ['text/html', '[object Object]'],
    };
    for (const [type, [mime, text]] of Object.entries(expected)) {
      const { requests, run } = setup(() => transitOk({}));
      await run('http/api', { url: 'x/y', method: 'post', body, contentType: type as HttpOptions['contentType'], accept: type as HttpOptions['accept'] });
      assert.equal(requests[0].headers['content-type'], mime, type);
      assert.equal(requests[0].headers.accept, mime, type);
      assert.equal(requests[0].body, text, type);
    }
    const { requests, run } = setup(() => transitOk({}));
    await run('http/api', { url: 'x/y', method: 'post', body: { a: 1 } });
    assert.equal(requests[0].headers['content-type'], transitJson.mime);
    assert.equal(requests[0].headers.accept, transitJson.mime);
  });

  it('decodes each response type, extracts successPath and appends the result to every success event', async () => {
    const bodies: Array<[TransportResponse, unknown]> = [
      [transitOk({ account: { email: 'a@b.c' } }), 'a@b.c'],
      [{ status: 200, contentType: json.mime, text: '{"account":{"email":"j@b.c"}}' }, 'j@b.c'],
      [{ status: 200, contentType: edn.mime, text: '{:account {:email "e@b.c"}}' }, 'e@b.c'],
    ];
    for (const [response, email] of bodies) {
      const { events, run } = setup(() => response);
      await run('http/api', { url: 'x/y', successPath: ['account', 'email'], onSuccess: ['ok', 'arg'], onSuccessN: [['ok2']] });
      assert.deepEqual(events, [
        ['ok', 'arg', email],
        ['ok2', email],
      ]);
    }
    const { events, run } = setup(() => ({ status: 200, contentType: 'text/html', text: '<p>hi</p>' }));
    await run('http/request', { url: 'https://example.test/page', accept: 'html', onSuccess: ['ok'] });
    assert.deepEqual(events, [['ok', '<p>hi</p>']]);
  });

  it('sends status >= 400 to every failure handler with the body', async () => {
    const { events, run } = setup(() => transitOk({ type: 'conflict', message: 'taken' }, 409));
    await run('http/api', { url: 'account/sign-up', method: 'post', body: {}, onSuccess: ['ok'], onFailure: ['fail', 1], onFailureN: [['fail2']] });
    assert.deepEqual(events, [
      ['fail', 1, { type: 'conflict', message: 'taken' }],
      ['fail2', { type: 'conflict', message: 'taken' }],
    ]);
  });

  it('reports network errors, time-outs and aborts as failures', async () => {
    const network = setup(() => {
      throw new TypeError('fetch failed');
    });
    await network.run('http/api', { url: 'x/y', onFailure: ['fail'] });
    assert.equal((network.events[0][1] as { kind: string }).kind, 'network');

    const slow = setup((req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')))));
    await slow.run('http/api', { url: 'x/y', timeoutMs: 20, onFailure: ['fail'] }, 80);
    assert.deepEqual(slow.events[0][1], { status: 0, kind: 'timeout', message: 'Request timed out' });

    const controller = new AbortController();
    const aborted = setup((req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')))));
    aborted.core.dispatch(['run', 'http/api', { url: 'x/y', signal: controller.signal, onFailure: ['fail'] }]);
    await sleep(5);
    controller.abort();
    await sleep(20);
    assert.equal((aborted.events[0][1] as { kind: string }).kind, 'aborted');
  });

  it('adds the CSRF token to non-GET API requests only, and the bearer token to auth-api only', async () => {
    const { requests, run } = setup(() => transitOk({}));
    await run('http/api', { url: 'a/b' });
    await run('http/api', { url: 'a/b', method: 'post', body: {} });
    await run('http/auth-api', { url: 'a/b', method: 'delete' });
    await run('http/request', { url: 'https://other.test/x', method: 'post', body: {} });
    await run('http/api', { url: 'a/b', token: 'explicit', queryParams: { q: 'x y', n: 2, skip: undefined }, headers: { 'x-extra': '1' } });
    assert.equal(requests[0].headers['x-csrf-token'], undefined);
    assert.equal(requests[1].headers['x-csrf-token'], 'csrf-123');
    assert.equal(requests[1].headers.authorization, undefined);
    assert.equal(requests[2].headers.authorization, 'Bearer old-token');
    assert.equal(requests[2].headers['x-csrf-token'], 'csrf-123');
    assert.equal(requests[3].url, 'https://other.test/x');
    assert.equal(requests[3].headers['x-csrf-token'], undefined);
    assert.equal(requests[4].url, '/api/a/b?q=x+y&n=2');
    assert.equal(requests[4].headers.authorization, 'Bearer explicit');
    assert.equal(requests[4].headers['x-extra'], '1');
  });

  it('refreshes once on 401, retries with the new token, and shares one refresh among concurrent 401s', async () => {
    let refreshes = 0;
    const { requests, events, run, core } = setup(async (req) => {
      if (req.url === '/api/account/refresh') {
        refreshes++;
        await sleep(20);
        return transitOk({ 'access-token': 'new-token' });
      }
      return req.headers.authorization === 'Bearer new-token' ? transitOk({ ok: true }) : transitOk({ type: 'unauthorized', message: 'expired' }, 401);
    });
    core.dispatch(['run', 'http/auth-api', { url: 'account/me', onSuccess: ['ok', 1] }]);
    core.dispatch(['run', 'http/auth-api', { url: 'account/me', onSuccess: ['ok', 2] }]);
    await run('http/auth-api', { url: 'account/me', onSuccess: ['ok', 3] }, 100);
    assert.equal(refreshes, 1);
    assert.deepEqual(events.map((e) => e[1]).sort(), [1, 2, 3]);
    assert.equal(core.state.token, 'new-token');
    const refresh = requests.find((r) => r.url === '/api/account/refresh')!;
    assert.equal(refresh.method, 'POST');
    assert.equal(refresh.headers['x-csrf-token'], 'csrf-123');
  });

  it('a 401 to a request whose token a log-out forgot meanwhile neither refreshes nor sends to log in', async () => {
    const { requests, events, run, core } = setup(async () => {
      // the log-out happens while this request is on its way; the server has ended the session
      core.state.token = undefined;
      return transitOk({ type: 'unauthorized', message: 'session ended' }, 401);
    });
    await run('http/auth-api', { url: 'account/me', onFailure: ['fail'] }, 60);
    assert.deepEqual(
      requests.map((r) => r.url),
      ['/api/account/me'],
    );
    assert.deepEqual(events, [['fail', { type: 'unauthorized', message: 'session ended' }]]);
  });

  it('does not loop when the retried request fails again', async () => {
    let calls = 0;
    const { events, run } = setup((req) => {
      calls++;
      return req.url === '/api/account/refresh' ? transitOk({ 'access-token': 'new-token' }) : transitOk({ type: 'unauthorized', message: 'no' }, 401);
    });
    await run('http/auth-api', { url: 'account/me', onFailure: ['fail'] }, 60);
    assert.equal(calls, 3, 'request, refresh, one retry');
    assert.deepEqual(events, [['fail', { type: 'unauthorized', message: 'no' }]]);
  });

  it('http/refresh-token renews the token through the refresh shared with concurrent 401s, or says it could not', async () => {
    let refreshes = 0;
    let refusing = false;
    const { events, core } = setup(async (req) => {
      if (req.url === '/api/account/refresh') {
        refreshes++;
        await sleep(20);
        return refusing ? transitOk({ type: 'unauthorized', message: 'session ended' }, 401) : transitOk({ 'access-token': 'new-token' });
      }
      return req.headers.authorization === 'Bearer new-token' ? transitOk({ ok: true }) : transitOk({ type: 'unauthorized', message: 'expired' }, 401);
    });
    core.dispatch(['run', 'http/auth-api', { url: 'account/me', onSuccess: ['ok', 'request'] }]);
    core.dispatch(['run', 'http/refresh-token', { onSuccess: ['ok2', 'renewed'], onFailure: ['fail'] }]);
    await sleep(100);
    assert.equal(refreshes, 1, 'one refresh for the 401 and the effect');
    assert.equal(core.state.token, 'new-token');
    assert.deepEqual(events.map((e) => e[1]).sort(), ['renewed', 'request']);
    refusing = true;
    events.length = 0;
    core.dispatch(['run', 'http/refresh-token', { onSuccess: ['ok2'], onFailure: ['fail', 'gone'] }]);
    await sleep(60);
    assert.deepEqual(events, [['fail', 'gone']]);
    assert.equal(core.state.token, undefined, 'the refused refresh forgets the token');
  });

  it('sends the user to log in when the refresh fails', async () => {
    const { events, run, core } = setup(() => transitOk({ type: 'unauthorized', message: 'no' }, 401));
    await run('http/auth-api', { url: 'account/me', onFailure: ['fail'] }, 60);
    assert.deepEqual(events[0], ['router/navigate', { route: 'log-in' }]);
    assert.equal(events[1][0], 'fail');
    assert.equal(core.state.token, undefined);
  });
});
