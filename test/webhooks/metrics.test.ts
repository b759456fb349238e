/**
 * The outgoing webhooks' metrics on METRICS_PORT: attempts by outcome and their durations,
 * the queue's depth and the age of its oldest pending delivery, read at scrape time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { emitWebhookEvent } from '../../src/webhooks/outbox.js';
import { scrape, metricValue } from '../observability/scrape.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { createEndpoint, deliveries, receiver, waitFor, type Receiver } from './support.js';

describe('outgoing webhook metrics', () => {
  let t: TestSystem;
  let hook: Receiver;
  let owner: TestAccount;

  before(async () => {
    hook = await receiver();
    t = await startSystem(testDatabases()[0], {
      METRICS_PORT: String(await freePort()),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_RETRY_SCHEDULE: '0.05',
    });
    owner = await account(t);
  });
  after(async () => {
    await t?.stop();
    await hook?.close();
  });

  it('count attempts by outcome with their durations, and read the queue at scrape time', async () => {
    const metrics = () => scrape(t.system.metricsUrl!);
    const before = await metrics();
    for (const outcome of ['succeeded', 'retry', 'failed']) assert.equal(metricValue(before, 'saas_outgoing_webhook_attempts_total', { outcome }), 0);
    assert.equal(metricValue(before, 'saas_outgoing_webhook_pending_deliveries'), 0);
    assert.equal(metricValue(before, 'saas_outgoing_webhook_oldest_pending_seconds'), 0);

    const org = await createOrg(t, owner, 'Measured');
    const endpoint = await createEndpoint(t, owner, org, { url: `${hook.url}/metrics`, events: ['webhook.test', 'member.updated'] });
    // retried once then delivered; then failed twice (the schedule has one retry)
    hook.byPath['/metrics'] = [{ status: 500 }, { status: 200 }, { status: 500 }];
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
    await waitFor('the first delivery', async () => (await deliveries(t, owner, org, endpoint.id))[0]?.status === 'succeeded');
    assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
    await waitFor('the second one to fail', async () => (await deliveries(t, owner, org, endpoint.id))[0]?.status === 'failed');
    const after = await metrics();
    assert.equal(metricValue(after, 'saas_outgoing_webhook_attempts_total', { outcome: 'succeeded' }), 1);
    assert.equal(metricValue(after, 'saas_outgoing_webhook_attempts_total', { outcome: 'retry' }), 2);
    assert.equal(metricValue(after, 'saas_outgoing_webhook_attempts_total', { outcome: 'failed' }), 1);
    assert.equal(metricValue(after, 'saas_outgoing_webhook_attempt_duration_seconds_count', { outcome: 'retry' }), 2);
    assert.equal(metricValue(after, 'saas_outgoing_webhook_attempt_duration_seconds_count', { outcome: 'succeeded' }), 1);

    // a delivery waiting for its retry, written an hour ago
    const db = t.system.database.db;
    await db.transaction().execute(async (trx) => {
      const id = await emitWebhookEvent(trx, org, 'member.updated', { member: { role: 'admin' } });
      // in the same transaction: the worker never sees it due
      await sql`update webhook_delivery set next_attempt_at = now() + interval '1 hour', created_at = now() - interval '1 hour' where message_id = ${id}`.execute(
        trx,
      );
    });
    const queued = await metrics();
    assert.equal(metricValue(queued, 'saas_outgoing_webhook_pending_deliveries'), 1);
    const age = metricValue(queued, 'saas_outgoing_webhook_oldest_pending_seconds');
    assert.ok(age >= 3600 && age < 3700, `oldest pending: ${age} s`);
  });
});
