/**
 * WEB_CONCURRENCY=2 with METRICS_PORT: the primary serves the workers' metrics, aggregated;
 * the workers do not listen on the metrics port themselves.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeClient } from '../support/http.js';
import { freePort } from '../support/net.js';
import { testDatabases } from '../support/system.js';
import { scrape, metricValue } from './scrape.js';

const pgUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI === 'true' && !pgUrl) throw new Error('CI=true requires TEST_DATABASE_URL');

describe('cluster metrics', () => {
  it("the primary serves both workers' requests, summed, on METRICS_PORT", { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    const { url, drop } = await postgres.create();
    const dir = await mkdtemp(join(tmpdir(), 'saas-cluster-metrics-'));
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        WEB_CONCURRENCY: '2',
        DATABASE_URL: url,
        APP_ENV: 'test',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_FILE: join(dir, 'saas-app.json'),
        REDIS_URL: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const client = makeClient(`http://127.0.0.1:${port}`);
      const metricsUrl = `http://127.0.0.1:${metricsPort}`;
      let up = false;
      for (let i = 0; i < 300 && !up; i++) {
        up = await client('GET', '/api/health').then(
          (r) => r.status === 200,
          () => false,
        );
        if (!up) await sleep(200);
      }
      assert.ok(up, 'the cluster answers');
      // let the second worker finish starting, so the requests below spread over both
      await sleep(1500);
      const labels = { method: 'GET', route: '/api/health', status: '200' };
      const before = metricValue(await scrape(metricsUrl), 'http_requests_total', labels);
      // fresh connections: the primary hands them to the workers in turn
      for (let i = 0; i < 20; i++) assert.equal((await client('GET', '/api/health', { freshConnection: true })).status, 200);
      const text = await scrape(metricsUrl);
      assert.equal(metricValue(text, 'http_requests_total', labels) - before, 20, "every worker's count is in the sum");
      assert.equal(metricValue(text, 'http_request_duration_seconds_count', labels) - before, 20);
      // the outbox depth is one reading of one table, not one per worker
      assert.equal(metricValue(text, 'saas_mail_outbox_pending'), 0);
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      await drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
