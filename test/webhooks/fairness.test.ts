/**
 * Delivery fairness and misbehaving receivers (docs/webhooks.md, "Delivery"; docs/deployment.md,
 * "When a dependency fails"), with real receivers: a TCP black hole (accepts, never answers), a
 * receiver that answers 200 and drips its body a byte at a time, and a healthy receiver verifying
 * every message with `standardwebhooks`. Two organizations' endpoints hang, each with a backlog:
 * one attempt in flight per endpoint, at most WEBHOOK_ORG_CONCURRENCY per organization, and a third
 * organization's healthy endpoint gets each new message within WEBHOOK_TIMEOUT + 5 s while the
 * backlogs are still waiting. Each hung attempt ends at WEBHOOK_TIMEOUT (recorded, retried), its
 * socket closed; once the receivers heal every message is delivered and no descriptor is left.
 * `test` and `retry` are limited per organization. SIGTERM stops a server whose attempt hangs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { emitWebhookEvent } from '../../src/webhooks/outbox.js';
import { databaseEnv, startServer } from '../db/processes.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import {
  createEndpoint,
  deliveries,
  misbehavingReceiver,
  receiver,
  waitFor,
  type CreatedEndpoint,
  type MisbehavingReceiver,
  type Receiver,
} from './support.js';

const TIMEOUT_S = 2;
const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_TIMEOUT: String(TIMEOUT_S),
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
  WEBHOOK_CONCURRENCY: '4',
  WEBHOOK_ORG_CONCURRENCY: '2',
  WEBHOOK_MANUAL_LIMIT: '5/3600',
};
/** each hanging organization's endpoints, and the messages each gets before the healthy one's */
const HUNG_ENDPOINTS = 3;
const BACKLOG = 5;

const openDescriptors = async () => (await readdir('/proc/self/fd')).length;

for (const db of testDatabases()) {
  describe(`webhook fairness on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let silent: MisbehavingReceiver;
    let drip: MisbehavingReceiver;
    let healthy: Receiver;

    before(async () => {
      t = await startSystem(db, ENV);
      owner = await account(t);
      [silent, drip, healthy] = await Promise.all([misbehavingReceiver('silent'), misbehavingReceiver('drip'), receiver()]);
    });
    after(async () => {
      await t?.stop();
      await Promise.all([silent?.close(), drip?.close(), healthy?.close()]);
    });

    const emit = (orgId: string, n: number) =>
      t.system.database.db
        .transaction()
        .execute((trx) => emitWebhookEvent(trx, orgId, 'member.updated', { member: { 'account-id': owner.id, role: 'owner', n } }));
    /** deliveries of the organization's endpoints never attempted yet */
    const unattempted = async (orgId: string) =>
      Number(
        (
          await sql<{ n: string }>`select count(*) as n from webhook_delivery d
      join webhook_endpoint e on e.id = d.endpoint_id where e.organization_id = ${orgId} and d.attempt_count = 0`.execute(t.system.database.db)
        ).rows[0].n,
      );
    const undelivered = async (orgIds: string[]) =>
      Number(
        (
          await sql<{ n: string }>`select count(*) as n from webhook_delivery d
      join webhook_endpoint e on e.id = d.endpoint_id where e.organization_id in (${sql.join(orgIds)}) and d.status <> 'succeeded'`.execute(
            t.system.database.db,
          )
        ).rows[0].n,
      );

    it("keeps a healthy endpoint on time while two organizations' endpoints hang with backlogs, and ends every hung attempt at the timeout", async () => {
      const baseline = await openDescriptors();
      const [silentOrg, dripOrg, healthyOrg] = await Promise.all([
        createOrg(t, owner, 'Silent'),
        createOrg(t, owner, 'Dripping'),
        createOrg(t, owner, 'Healthy'),
      ]);
      const silentEndpoints: CreatedEndpoint[] = [];
      const dripEndpoints: CreatedEndpoint[] = [];
      for (let i = 0; i < HUNG_ENDPOINTS; i++) {
        silentEndpoints.push(await createEndpoint(t, owner, silentOrg, { url: `${silent.url}/silent-${i}`, events: ['member.updated'] }));
        dripEndpoints.push(await createEndpoint(t, owner, dripOrg, { url: `${drip.url}/drip-${i}`, events: ['member.updated'] }));
      }
      const ok = await createEndpoint(t, owner, healthyOrg, { url: `${healthy.url}/healthy`, events: ['member.updated'] });
      healthy.secrets.push(ok.secret);
      for (let n = 0; n < BACKLOG; n++) await Promise.all([emit(silentOrg, n), emit(dripOrg, n)]);
      // every slot of the instance is taken by hung attempts (2 + 2 of WEBHOOK_CONCURRENCY 4)
      await waitFor('hung attempts in flight', () => silent.open() === 2 && drip.open() === 2);

      for (let n = 0; n < 3; n++) {
        const sent = performance.now();
        await emit(healthyOrg, n);
        const got = await waitFor(`healthy message ${n}`, () => healthy.verified('/healthy').find((d) => d.event.data.member.n === n), 30_000);
        const seconds = (performance.now() - sent) / 1000;
        assert.ok(seconds <= TIMEOUT_S + 5, `healthy message ${n} after ${seconds.toFixed(1)} s`);
        assert.ok(got.verifiedWith.includes(ok.secret));
        // not after the backlogs: both still wait
        assert.ok((await unattempted(silentOrg)) > 0 && (await unattempted(dripOrg)) > 0, `message ${n} came before the hung organizations' backlogs`);
      }
      assert.equal(silent.maxOpenPerPath, 1, 'one attempt in flight per endpoint');
      assert.equal(drip.maxOpenPerPath, 1, 'one attempt in flight per endpoint');
      assert.equal(silent.maxOpen, 2, 'WEBHOOK_ORG_CONCURRENCY attempts per organization');
      assert.equal(drip.maxOpen, 2, 'WEBHOOK_ORG_CONCURRENCY attempts per organization');

      // each hung attempt ended at the timeout, recorded with what it got and retried
      const silentDelivery = await waitFor('an attempt to the black hole', async () =>
        (await deliveries(t, owner, silentOrg, silentEndpoints[0].id)).find((d: any) => d.attempts.length > 0),
      );
      assert.deepEqual([silentDelivery.attempts[0]['status-code'], silentDelivery.attempts[0].error], [null, 'timeout']);
      assert.ok(silentDelivery.attempts[0]['duration-ms'] >= TIMEOUT_S * 1000 - 50 && silentDelivery.attempts[0]['duration-ms'] < (TIMEOUT_S + 5) * 1000);
      const dripDelivery = await waitFor('an attempt to the dripping receiver', async () =>
        (await deliveries(t, owner, dripOrg, dripEndpoints[0].id)).find((d: any) => d.attempts.length > 0),
      );
      assert.deepEqual(
        [dripDelivery.attempts[0]['status-code'], dripDelivery.attempts[0].error],
        [200, 'timeout'],
        'a status without its body within the timeout is no answer',
      );
      assert.ok(dripDelivery.attempts[0]['duration-ms'] < (TIMEOUT_S + 5) * 1000, `${dripDelivery.attempts[0]['duration-ms']} ms: the drip does not extend it`);
      for (const delivery of [silentDelivery, dripDelivery]) {
        assert.equal(delivery.status, 'pending', 'retried on WEBHOOK_RETRY_SCHEDULE');
        assert.ok(delivery['next-attempt-at']);
      }

      // healed: every queued message is delivered, and no socket or descriptor is left behind
      silent.heal();
      drip.heal();
      await waitFor('every backlog delivered', async () => (await undelivered([silentOrg, dripOrg])) === 0, 120_000);
      await waitFor("the receivers' connections closed", () => silent.open() === 0 && drip.open() === 0);
      assert.ok(silent.accepted >= HUNG_ENDPOINTS * BACKLOG && drip.accepted >= HUNG_ENDPOINTS * BACKLOG);
      const left = await openDescriptors();
      // the database pool may have grown by a few connections; each leaked attempt would leave two (both ends are in this process)
      assert.ok(left <= baseline + 8, `descriptors: ${baseline} before, ${left} after ${silent.accepted + drip.accepted} attempts`);
    });

    it("limits `test` and `retry` per organization (429), not another organization's", async () => {
      const [busy, other] = await Promise.all([createOrg(t, owner, 'Busy tester'), createOrg(t, owner, 'Other tester')]);
      const endpoint = await createEndpoint(t, owner, busy, { url: `${healthy.url}/limited`, events: ['member.updated'] });
      const otherEndpoint = await createEndpoint(t, owner, other, { url: `${healthy.url}/other`, events: ['member.updated'] });
      for (let i = 0; i < 5; i++) assert.equal((await as(t, owner, 'POST', `/api/orgs/${busy}/webhooks/${endpoint.id}/test`)).status, 202);
      const refused = await as(t, owner, 'POST', `/api/orgs/${busy}/webhooks/${endpoint.id}/test`);
      assert.deepEqual([refused.status, refused.body.type], [429, 'rate-limited'], refused.text);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      const [delivery] = await deliveries(t, owner, busy, endpoint.id);
      const retried = await as(t, owner, 'POST', `/api/orgs/${busy}/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`);
      assert.deepEqual([retried.status, retried.body.type], [429, 'rate-limited'], 'retry shares the count');
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${other}/webhooks/${otherEndpoint.id}/test`)).status, 202, 'another organization is not held');
    });
  });
}

describe('SIGTERM while a webhook attempt hangs', () => {
  it('stops the server within SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT + 5 s, exit code 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-webhook-sigterm-'));
    // the hanging attempt is the subject: a migrated PostgreSQL copy starts without PGlite's initdb
    const postgres = await testDatabases()
      .find((d) => d.name === 'postgres')
      ?.create();
    const hole = await misbehavingReceiver('silent');
    const server = await startServer({
      ...databaseEnv(postgres ? { url: postgres.url } : { pgliteDir: join(dir, 'db') }),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_TIMEOUT: '120',
      SHUTDOWN_DELAY: '1',
      SHUTDOWN_TIMEOUT: '2',
      SIGNUP_LIMIT_ADDRESS: '0',
    });
    try {
      const client = makeClient(server.url);
      const { email, id } = await signUp(client, uniqueEmail('sigterm'));
      const owner = { id, email, token: (await logIn(client, email)).body['access-token'] as string };
      const remote = { client } as Parameters<typeof as>[0];
      const orgId = await createOrg(remote, owner, 'Hanging');
      const endpoint = await createEndpoint(remote, owner, orgId, { url: `${hole.url}/hang`, events: ['organization.updated'] });
      assert.equal((await as(remote, owner, 'POST', `/api/orgs/${orgId}/webhooks/${endpoint.id}/test`)).status, 202);
      await waitFor('the hanging attempt', () => hole.open() === 1, 30_000);
      const signalled = performance.now();
      const code = await server.stop();
      const seconds = (performance.now() - signalled) / 1000;
      assert.equal(code, 0);
      assert.ok(seconds <= 1 + 2 + 5, `stopped after ${seconds.toFixed(1)} s`);
      await waitFor('the hanging connection closed with the process', () => hole.open() === 0);
    } finally {
      server.child.kill('SIGKILL');
      await hole.close();
      await postgres?.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
