import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COMPRESS_SYNC_LIMIT, COMPRESS_THRESHOLD, compressApiBody, negotiateEncoding } from '../../src/http/compression.js';

/** A reply holding its headers, and the onSend's outcome. */
function send(payload: unknown, acceptEncoding: string | undefined, headers: Record<string, string> = {}) {
  const set: Record<string, string> = { ...headers };
  const reply = {
    getHeader: (name: string) => set[name],
    header(name: string, value: string) {
      set[name] = value;
      return reply;
    },
  };
  const request = { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } };
  return new Promise<{ value: unknown; headers: Record<string, string> }>((resolve, reject) =>
    compressApiBody(request as unknown as FastifyRequest, reply as unknown as FastifyReply, payload, (err, value) =>
      err ? reject(err) : resolve({ value, headers: set }),
    ),
  );
}

describe('API answer compression', () => {
  it('negotiates br, gzip (x-gzip) and deflate by preference and weight; nothing for identity or refusals', () => {
    assert.equal(negotiateEncoding('gzip, deflate, br'), 'br');
    assert.equal(negotiateEncoding('gzip;q=1, br;q=0.5'), 'gzip');
    assert.equal(negotiateEncoding('X-GZIP'), 'gzip');
    assert.equal(negotiateEncoding('deflate'), 'deflate');
    assert.equal(negotiateEncoding('identity'), undefined);
    assert.equal(negotiateEncoding('br;q=0, gzip;q=0, deflate;q=0'), undefined);
    assert.equal(negotiateEncoding(undefined), undefined);
  });

  it('compresses a body past the event-loop limit in the thread pool, with the same result', async () => {
    const body = JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => ({ id: i, name: `item ${i}` })) });
    assert.ok(Buffer.byteLength(body) > COMPRESS_SYNC_LIMIT);
    const { value, headers } = await send(body, 'gzip');
    assert.ok(Buffer.isBuffer(value));
    assert.equal(gunzipSync(value).toString('utf8'), body);
    assert.equal(headers['content-encoding'], 'gzip');
    assert.equal(headers['content-length'], String(value.length));
    assert.equal(headers.vary, 'accept-encoding');
  });

  it('measures multi-byte text in bytes: under the threshold in characters, over it in bytes', async () => {
    const body = JSON.stringify({ name: 'é'.repeat(COMPRESS_THRESHOLD / 2 + 10) });
    assert.ok(body.length < COMPRESS_THRESHOLD && Buffer.byteLength(body) >= COMPRESS_THRESHOLD);
    const { headers } = await send(body, 'gzip');
    assert.equal(headers['content-encoding'], 'gzip');
  });

  it('leaves alone what is small, already encoded, not a string, or asked without an encoding', async () => {
    const big = 'z'.repeat(COMPRESS_THRESHOLD * 2);
    assert.equal((await send('{"ok":true}', 'br')).value, '{"ok":true}');
    assert.equal((await send(big, undefined)).value, big);
    const encoded = await send(big, 'br', { 'content-encoding': 'br' });
    assert.equal(encoded.value, big);
    const buffer = Buffer.from(big);
    assert.equal((await send(buffer, 'br')).value, buffer);
  });

  it('adds accept-encoding to a Vary the route set, once', async () => {
    const big = 'z'.repeat(COMPRESS_THRESHOLD * 2);
    assert.equal((await send(big, 'br', { vary: 'origin' })).headers.vary, 'origin, accept-encoding');
    assert.equal((await send(big, 'br', { vary: 'Accept-Encoding' })).headers.vary, 'Accept-Encoding');
  });
});
