/**
 * OpenTelemetry end to end: a local OTLP/HTTP receiver collects what the exporter sends; one
 * request with an incoming `traceparent` must continue that trace, its queries must be its
 * children, and its log entries must carry its trace and span ids.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signUp, PASSWORD } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

/** An OTLP/HTTP receiver on 127.0.0.1: keeps the spans of every JSON export it is sent. */
async function startReceiver(): Promise<{ url: string; spans: OtlpSpan[]; paths: string[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, paths, server };
}

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined);
};

for (const db of testDatabases()) {
  describe(`tracing (${db.name})`, () => {
    let t: TestSystem;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    before(async () => {
      receiver = await startReceiver();
      t = await startSystem(db, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'saas-test' });
    });
    after(async () => {
      await t?.stop();
      receiver?.server.close();
    });

    it('continues an incoming traceparent; queries are children of the request span; its log entries carry the ids', async () => {
      const { email } = await signUp(t.client);
      const traceId = randomBytes(16).toString('hex');
      const parentId = randomBytes(8).toString('hex');
      const res = await t.client('POST', '/api/account/log-in', {
        body: { email, password: PASSWORD },
        headers: { traceparent: `00-${traceId}-${parentId}-01` },
      });
      assert.equal(res.status, 200);
      await t.system.tracing!.flush();

      assert.ok(
        receiver.paths.every((p) => p.startsWith('POST /v1/traces application/json')),
        receiver.paths.join(', '),
      );
      const requestSpan = receiver.spans.find((s) => s.traceId === traceId && s.parentSpanId === parentId);
      assert.ok(requestSpan, 'a span continues the incoming trace, child of the incoming span');
      assert.equal(requestSpan.name, 'POST /api/account/log-in');
      assert.equal(requestSpan.kind, 2, 'SERVER');
      assert.equal(attr(requestSpan, 'http.route'), '/api/account/log-in');
      assert.equal(attr(requestSpan, 'http.response.status_code'), 200);
      assert.equal(attr(requestSpan, 'http.request.method'), 'POST');

      const queries = receiver.spans.filter((s) => s.traceId === traceId && attr(s, 'db.system.name') === 'postgresql');
      assert.ok(queries.length >= 2, `the log-in's queries are traced (${queries.length})`);
      for (const q of queries) assert.equal(q.parentSpanId, requestSpan.spanId, `${q.name} is a child of the request span`);
      assert.ok(queries.some((q) => q.name === 'SELECT' && /from "account"/.test(String(attr(q, 'db.query.text')))));
      // the statement is traced, its values are not
      assert.ok(!receiver.spans.some((s) => JSON.stringify(s).includes(email)), 'no query parameter in any span');

      const entries = (await t.logEntries()).filter((e) => e.ctx['trace-id'] === traceId);
      const ids = new Set(entries.map((e) => e.id));
      assert.ok(ids.has('account/logged-in') && ids.has('api-call/response'), [...ids].join(', '));
      for (const e of entries) assert.equal(e.ctx['span-id'], requestSpan.spanId, `${e.id} carries the request span's id`);
    });

    it('starts a new trace for a request without traceparent, named by the route template', async () => {
      const res = await t.client('GET', `/api/account/${randomBytes(4).toString('hex')}-nope`);
      await t.system.tracing!.flush();
      const span = receiver.spans.find((s) => s.kind === 2 && !s.parentSpanId && attr(s, 'http.response.status_code') === res.status);
      assert.ok(span, 'a root server span');
      assert.equal(span.name, 'GET not-found', 'no route matched: a fixed name, never the path');
    });
  });
}

describe('tracing off', () => {
  it('has no tracing component and no trace ids in the log context', async () => {
    const t = await startSystem(testDatabases()[0]);
    try {
      assert.equal(t.system.tracing, undefined);
      await t.client('GET', '/api/health', { headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } });
      const entry = (await t.logEntries()).find((e) => e.id === 'api-call/response');
      assert.ok(entry);
      assert.equal(entry.ctx['trace-id'], undefined);
    } finally {
      await t.stop();
    }
  });
});
