/**
 * Slow and large clients: a client that sends its headers or body slowly, or never finishes,
 * is dropped when its time is up, without stopping anyone else; bodies over a route's limit are 413.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

/** Opens a raw connection, writes `chunks` one every `everyMs`, resolves with when and how it ended. */
function dribble(url: string, chunks: string[], everyMs: number): Promise<{ closedAfterMs: number; received: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    let received = '';
    const socket: Socket = connect(Number(port), hostname);
    let i = 0;
    const timer = setInterval(() => {
      if (i < chunks.length && !socket.destroyed) socket.write(chunks[i++]);
    }, everyMs);
    socket.on('data', (d) => {
      received += d;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - started, received });
    });
  });
}

describe('slow and large clients', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0], { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000' });
  });
  after(async () => t?.stop());

  it('drops a client that sends its headers slowly (slowloris), and serves others meanwhile', async () => {
    const headerLines = ['GET /api/health HTTP/1.1\r\n', 'Host: localhost\r\n', ...Array.from({ length: 50 }, (_, i) => `X-Slow-${i}: ${i}\r\n`)];
    const slow = dribble(t.url, headerLines, 200);
    const during = await t.client('GET', '/api/health');
    assert.equal(during.status, 200);
    const { closedAfterMs, received } = await slow;
    assert.ok(closedAfterMs < 4000, `closed after ${closedAfterMs} ms`);
    assert.match(received, /^(HTTP\/1\.1 408|)/);
  });

  it('drops a client that sends its body slowly or never finishes it', async () => {
    const head = 'POST /api/account/log-in HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n';
    const slowBody = dribble(t.url, [head, ...'{"email":"a@b.c","password":"xxxxxxxx"'.split('')], 300);
    const neverEnds = dribble(t.url, [head, '{"email":'], 10);
    for (const { closedAfterMs } of await Promise.all([slowBody, neverEnds])) assert.ok(closedAfterMs < 4000, `closed after ${closedAfterMs} ms`);
    assert.equal((await t.client('GET', '/api/health')).status, 200);
  });

  it("applies each route's body limit", async () => {
    const signUp = await t.client('POST', '/api/account/sign-up', { body: { email: 'big@example.com', password: 'x'.repeat(20_000) } });
    assert.equal(signUp.status, 413);
    assert.equal(signUp.body.type, 'payload-too-large');
    const query = await t.client('POST', '/api/cqrs/query', { body: { 'query/kind': 'account/me', pad: 'x'.repeat(70_000) } });
    assert.equal(query.status, 413);
    // the webhook takes provider-sized events: refused for its signature, not its size
    const webhook = await t.client('POST', '/api/webhooks/stripe', { body: { id: 'evt', type: 't', pad: 'x'.repeat(500_000) } });
    assert.equal(webhook.status, 400);
    assert.equal(webhook.body.type, 'invalid-signature');
  });
});
