/**
 * The audit log's retention on both databases: the hourly pass deletes an organization's entries
 * older than its plan's `audit-log-retention-days` (the default plan's here: 30), never one a stream
 * of the organization still owes (a paused stream's owed entries stay until it delivers them), and
 * never another organization's newer ones; with the stream resumed and caught up, they go too. A
 * delete of an owed entry by any other path is refused by the database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { auditStreamsModule } from '../../src/audit-streams/module.js';
import { catalogueFile } from '../billing/usage-support.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { waitFor } from '../webhooks/support.js';
import { createStream, streamReceiver, type StreamReceiver } from './support.js';

const CATALOGUE = { meters: {}, plans: [{ id: 'free', name: 'Free', default: true, 'audit-log-retention-days': 30 }] };

for (const db of testDatabases()) {
  describe(`audit log retention on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let receiver: StreamReceiver;

    before(async () => {
      t = await startSystem(db, {
        BILLING_PLANS_FILE: catalogueFile(CATALOGUE),
        WEBHOOK_ALLOW_PRIVATE: 'true',
        AUDIT_STREAM_POLL_MS: '20',
        AUDIT_STREAM_RETRY_SCHEDULE: '0.05',
      });
      receiver = await streamReceiver();
      owner = await account(t);
    });
    after(async () => {
      await t?.stop();
      await receiver?.close();
    });

    const retention = () => (t.system.services(auditStreamsModule) as { retention(): Promise<number> }).retention();
    const count = async (orgId: string, olderThanDays: number) =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from audit_entry where organization_id = ${orgId} and created_at < now() - make_interval(days => ${olderThanDays})`.execute(
            t.system.database.db,
          )
        ).rows[0].n,
      );
    const backdate = (orgId: string, n: number, days: number) =>
      sql`insert into audit_entry (organization_id, action, details, created_at)
          select ${orgId}::uuid, 'org.renamed', '{}'::jsonb, now() - make_interval(days => ${days}) from generate_series(1, ${n})`.execute(
        t.system.database.db,
      );

    it('purges entries past the plan retention, never one a stream still owes', async () => {
      const streamed = await createOrg(t, owner, 'Streamed');
      const plain = await createOrg(t, owner, 'Plain');
      const created = await createStream(t, owner, streamed, { kind: 'https', url: `${receiver.url}/kept` });
      receiver.secrets['/kept'] = created.secret;
      await waitFor('the first batch', async () => (await as(t, owner, 'GET', `/api/orgs/${streamed}/audit-log/streams/${created.id}`)).body.lag === 0);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${streamed}/audit-log/streams/${created.id}/pause`)).status, 200);
      // old entries appended while the stream is paused: owed to it
      await backdate(streamed, 5, 40);
      await backdate(plain, 7, 40);
      await backdate(plain, 3, 20);
      assert.equal(await retention(), 7, "only the plain organization's old entries go");
      assert.equal(await count(plain, 30), 0);
      assert.equal(await count(plain, 10), 3, 'those within the retention stay');
      assert.equal(await count(streamed, 30), 5, 'owed entries stay');
      await assert.rejects(
        sql`select audit_entry_prune_organization(${streamed}::uuid, now())`.execute(t.system.database.db).then(async () => {
          if ((await count(streamed, 30)) < 5) throw new Error('an owed entry was pruned');
          throw new Error('kept');
        }),
        /kept/,
      );
      await assert.rejects(
        sql`delete from audit_entry where organization_id = ${streamed} and created_at < now() - interval '30 days'`.execute(t.system.database.db),
        /append-only|foreign key/,
      );
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${streamed}/audit-log/streams/${created.id}/resume`)).status, 200);
      await waitFor('delivered', async () => (await as(t, owner, 'GET', `/api/orgs/${streamed}/audit-log/streams/${created.id}`)).body.lag === 0);
      assert.equal(await retention(), 5, 'delivered, they go');
      assert.equal(await count(streamed, 30), 0);
    });
  });
}
