/**
 * Issue 14, item 1: request input must not survive the request in a process-lifetime cache.
 * Thousands of distinct large map keys, in every request format, to a route that does not exist
 * and to real ones; the heap after a full GC must come back to where it was. Heap is measured,
 * never time; the traffic is bounded (about 170 MB in all).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { edn, json, transitJson } from '../../src/http/formats.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;

interface Sender {
  name: string;
  contentType: string;
  /** a body holding each of `keys` as a map key */
  body(keys: string[]): string;
}

const SENDERS: Sender[] = [
  { name: 'json', contentType: json.mime, body: (keys) => json.encode(Object.fromEntries(keys.map((k) => [k, 1]))) },
  { name: 'edn', contentType: edn.mime, body: (keys) => `{${keys.map((k) => `:${k} 1`).join(' ')}}` },
  { name: 'transit', contentType: transitJson.mime, body: (keys) => JSON.stringify(['^ ', ...keys.flatMap((k) => [`~:${k}`, 1])]) },
  { name: 'form', contentType: 'application/x-www-form-urlencoded', body: (keys) => keys.map((k) => `${k}=1`).join('&') },
];

/** A key no other request has sent, `length` characters long. */
function distinctKey(length: number): string {
  const unique = randomBytes(8).toString('hex');
  return unique + 'k'.repeat(length - unique.length);
}

async function heapAfterGc(t: TestSystem): Promise<number> {
  await t.system.logs.flush();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

for (const db of testDatabases().slice(0, 1)) {
  describe('request input does not outlive its request (heap)', () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(async () => t?.stop());

    const post = (path: string, sender: Sender, keys: string[]) =>
      t.client('POST', path, { headers: { 'content-type': sender.contentType }, body: sender.body(keys) });

    it('answers a route that does not exist with 404 in the negotiated format, without decoding its body', async () => {
      for (const format of [json, edn, transitJson]) {
        const res = await t.client('POST', '/api/nope', { format, body: '{"broken' });
        assert.equal(res.status, 404, res.text);
        assert.equal(res.headers['content-type'], format.mime);
        assert.equal(res.body.type, 'not-found');
      }
      // the connection (kept alive) still serves the next request
      const next = await t.client('GET', '/api/health');
      assert.equal(next.status, 200);
    });

    it('returns to its baseline after ~170 MB of distinct keys to unknown and real routes', async () => {
      // warm up every path, so code and the caches of real keys exist before the baseline
      for (const sender of SENDERS) {
        for (let i = 0; i < 5; i++) {
          await post('/api/nope', sender, [distinctKey(40)]);
          await post('/api/cqrs/query', sender, [distinctKey(40)]);
          await post('/api/account/log-in', sender, [distinctKey(40)]);
        }
      }
      const baseline = await heapAfterGc(t);
      // a route that does not exist: one ~1 MB key per request, just under BODY_LIMIT
      let sent = 0;
      for (const sender of SENDERS) {
        for (let i = 0; i < 30; i++) {
          const body = sender.body([distinctKey(MB - 100 - i)]);
          const res = await t.client('POST', '/api/nope', { headers: { 'content-type': sender.contentType }, body });
          assert.equal(res.status, 404, `${sender.name}: ${res.text.slice(0, 200)}`);
          sent += body.length;
        }
      }
      const afterUnknown = await heapAfterGc(t);
      assert.ok(sent > 100 * MB, `sent ${Math.round(sent / MB)} MB`);
      assert.ok(
        afterUnknown - baseline < 15 * MB,
        `unknown route: the heap kept ${Math.round((afterUnknown - baseline) / MB)} MB of ${Math.round(sent / MB)} MB sent`,
      );

      // real routes, within their body limits (64 KiB, 16 KiB): 4 KB keys, 12,000 of them
      sent = 0;
      for (const sender of SENDERS) {
        for (let i = 0; i < 200; i++) {
          const keys = Array.from({ length: 15 }, (_, j) => distinctKey(4000 - j));
          const res = await post('/api/cqrs/query', sender, keys);
          assert.equal(res.status, 400, `${sender.name}: ${res.text.slice(0, 200)}`);
          sent += keys.length * 4000;
        }
        for (let i = 0; i < 40; i++) {
          const keys = Array.from({ length: 4 }, (_, j) => distinctKey(3500 - j));
          const res = await post('/api/account/log-in', sender, keys);
          assert.equal(res.status, 400, `${sender.name}: ${res.text.slice(0, 200)}`);
          sent += keys.length * 3500;
        }
      }
      const grown = (await heapAfterGc(t)) - afterUnknown;
      assert.ok(sent > 45 * MB, `sent ${Math.round(sent / MB)} MB`);
      assert.ok(grown < 15 * MB, `real routes: the heap kept ${Math.round(grown / MB)} MB of ${Math.round(sent / MB)} MB sent`);
    });
  });
}
