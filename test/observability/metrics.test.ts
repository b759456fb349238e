/**
 * Prometheus metrics on their own listener: the counters move for known routes, unknown paths
 * cannot grow the number of series, and the outcomes services report are counted.
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { logIn, signUp } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { parseScrape, scrape, metricValue } from './scrape.js';

const SECRET = 'whsec_metrics_0123';

/** `count` GETs of distinct unknown paths, `concurrency` at a time over keep-alive connections. */
async function hitUnknownPaths(baseUrl: string, count: number, concurrency = 16): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const { hostname, port } = new URL(baseUrl);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await new Promise<void>((resolve, reject) => {
        request({ host: hostname, port, path: `/api/no-such-thing-${i}/x${i}?q=${i}`, agent, headers: { accept: 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 404 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        })
          .on('error', reject)
          .end();
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
}

for (const db of testDatabases()) {
  describe(`metrics (${db.name})`, () => {
    let t: TestSystem;
    let metricsUrl: string;

    before(async () => {
      t = await startSystem(db, { METRICS_PORT: String(await freePort()), STRIPE_WEBHOOK_SECRET: SECRET, LOGIN_LIMIT_EMAIL: '2/60', LOGIN_LIMIT_ADDRESS: '0' });
      metricsUrl = t.system.metricsUrl!;
    });
    after(() => t?.stop());

    it('serves /metrics on its own listener on 127.0.0.1, never on the public port', async () => {
      assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await t.client('GET', '/metrics')).status, 404);
      const res = await fetch(`${metricsUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      // Node's default process metrics
      assert.ok(metricValue(text, 'process_cpu_user_seconds_total') > 0);
      assert.ok(parseScrape(text).some((s) => s.name === 'nodejs_eventloop_lag_seconds'));
      assert.equal((await fetch(`${metricsUrl}/other`)).status, 404);
    });

    it('counts requests by method, route template and status, with their durations', async () => {
      const labels = { method: 'GET', route: '/api/health', status: '200' };
      const before = await scrape(metricsUrl);
      for (let i = 0; i < 3; i++) assert.equal((await t.client('GET', '/api/health')).status, 200);
      const after = await scrape(metricsUrl);
      assert.equal(metricValue(after, 'http_requests_total', labels) - metricValue(before, 'http_requests_total', labels), 3);
      assert.equal(metricValue(after, 'http_request_duration_seconds_count', labels) - metricValue(before, 'http_request_duration_seconds_count', labels), 3);
      assert.ok(metricValue(after, 'http_request_duration_seconds_sum', labels) > metricValue(before, 'http_request_duration_seconds_sum', labels));
      // a path parameter is labelled by its template, not by the value
      const { id } = await signUp(t.client);
      const me = await t.client('GET', `/api/account/${id}`);
      const text = await scrape(metricsUrl);
      assert.ok(!text.includes(id), 'no raw path in any label');
      assert.ok(parseScrape(text).some((s) => s.name === 'http_requests_total' && s.labels.status === String(me.status) && !s.labels.route.includes(id)));
    });

    it('keeps the number of series bounded whatever paths are asked for', async () => {
      await hitUnknownPaths(t.url, 20);
      const before = await scrape(metricsUrl);
      await hitUnknownPaths(t.url, 10_000);
      const after = await scrape(metricsUrl);
      // the runtime's default metrics (nodejs_*, process_*) gain series of their own under load (a
      // new GC kind is a whole histogram: nine series); the rest must not grow, and never by path
      const ours = (text: string) => parseScrape(text).filter((s) => !/^(nodejs|process)_/.test(s.name)).length;
      const [beforeSeries, afterSeries] = [ours(before), ours(after)];
      assert.ok(afterSeries - beforeSeries < 5, `the application's series grew from ${beforeSeries} to ${afterSeries}`);
      assert.ok(!after.includes('no-such-thing'));
      const notFound = { method: 'GET', route: 'not-found', status: '404' };
      assert.equal(metricValue(after, 'http_requests_total', notFound) - metricValue(before, 'http_requests_total', notFound), 10_000);
    });

    it('counts requests the router refuses (an over-long path parameter) as not-found, with their status', async () => {
      const refused = { method: 'POST', route: 'not-found', status: '414' };
      const before = await scrape(metricsUrl);
      assert.equal((await t.client('POST', `/api/webhooks/${'x'.repeat(300)}`)).status, 414);
      const after = await scrape(metricsUrl);
      assert.equal(metricValue(after, 'http_requests_total', refused) - metricValue(before, 'http_requests_total', refused), 1);
      assert.equal(metricValue(after, 'http_request_duration_seconds_count', refused) - metricValue(before, 'http_request_duration_seconds_count', refused), 1);
    });

    it('counts log-in outcomes: success, failure, rate-limited', async () => {
      const before = await scrape(metricsUrl);
      const { email } = await signUp(t.client);
      assert.equal((await logIn(t.client, email)).status, 200);
      assert.equal((await logIn(t.client, email, 'wrong-password')).status, 401);
      assert.equal((await logIn(t.client, email, 'wrong-password')).status, 401);
      assert.equal((await logIn(t.client, email, 'wrong-password')).status, 429);
      const after = await scrape(metricsUrl);
      const moved = (outcome: string) => metricValue(after, 'saas_log_ins_total', { outcome }) - metricValue(before, 'saas_log_ins_total', { outcome });
      assert.deepEqual({ success: moved('success'), failure: moved('failure'), limited: moved('rate-limited') }, { success: 1, failure: 2, limited: 1 });
    });

    it('counts webhook events: received, duplicate, invalid signature', async () => {
      const stripe = new Stripe('sk_test_not_used');
      const payload = JSON.stringify({
        id: `evt_metrics_${db.name}`,
        type: 'invoice.payment_failed',
        created: 2,
        data: { object: { customer: 'cus_nobody' } },
      });
      const deliver = (signature: string) =>
        t.client('POST', '/api/webhooks/stripe', { headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
      const before = await scrape(metricsUrl);
      const signed = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
      assert.equal((await deliver(signed)).status, 200);
      assert.equal((await deliver(signed)).status, 200);
      assert.equal((await deliver(stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_wrong' }))).status, 400);
      const after = await scrape(metricsUrl);
      const moved = (labels: Record<string, string>) =>
        metricValue(after, 'saas_webhook_events_total', labels) - metricValue(before, 'saas_webhook_events_total', labels);
      assert.equal(moved({ provider: 'stripe', type: 'invoice.payment_failed', outcome: 'received' }), 1);
      assert.equal(moved({ provider: 'stripe', type: 'invoice.payment_failed', outcome: 'duplicate' }), 1);
      assert.equal(moved({ provider: 'stripe', type: 'unknown', outcome: 'invalid-signature' }), 1);
    });

    it('reports the outbox depth at scrape time and counts deliveries', async () => {
      const sentBefore = metricValue(await scrape(metricsUrl), 'saas_mail_deliveries_total', { outcome: 'sent' });
      await t.system.mail.enqueue(t.system.database.db, { kind: 'password-changed-notice', to: 'depth-1@example.com', data: { name: null } });
      let sent = sentBefore;
      for (let i = 0; i < 100 && sent === sentBefore; i++) {
        await sleep(50);
        sent = metricValue(await scrape(metricsUrl), 'saas_mail_deliveries_total', { outcome: 'sent' });
      }
      assert.equal(sent - sentBefore, 1);
      await t.system.mail.worker.stop(1000);
      const pendingBefore = metricValue(await scrape(metricsUrl), 'saas_mail_outbox_pending');
      for (let i = 0; i < 3; i++)
        await t.system.mail.enqueue(t.system.database.db, { kind: 'password-changed-notice', to: `depth-${i}@example.com`, data: { name: null } });
      assert.equal(metricValue(await scrape(metricsUrl), 'saas_mail_outbox_pending') - pendingBefore, 3);
    });

    it(`reports the database pool${db.name === 'pglite' ? ' only for PostgreSQL' : ''}`, async () => {
      const text = await scrape(metricsUrl);
      const pool = parseScrape(text).filter((s) => s.name === 'saas_db_pool_connections');
      if (db.name === 'pglite') {
        assert.equal(pool.length, 0);
      } else {
        assert.deepEqual(pool.map((s) => s.labels.state).sort(), ['idle', 'in-use']);
        assert.ok(pool.reduce((n, s) => n + s.value, 0) >= 1, 'at least one open connection');
        // the scrape's own outbox query may be waiting for a connection at that moment
        assert.equal(parseScrape(text).filter((s) => s.name === 'saas_db_pool_waiting').length, 1);
      }
    });
  });
}

describe('metrics off', () => {
  it('loads no listener and counts nothing without METRICS_PORT', async () => {
    const t = await startSystem(testDatabases()[0]);
    try {
      assert.equal(t.system.metrics, undefined);
      assert.equal(t.system.metricsUrl, undefined);
      assert.equal((await t.client('GET', '/metrics')).status, 404);
    } finally {
      await t.stop();
    }
  });
});
