/**
 * The audit log's filters and export on both databases: 10,000 entries exported as NDJSON equal
 * the API's pages, entry for entry; CSV in RFC 4180 with the header row and formula-looking cells
 * defused; the same filters as the page; gzip when accepted; bad filters a 400 naming them; the
 * export audited; admins only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { parseCsv } from '../support/csv.js';

const N = 10_000;

for (const db of testDatabases()) {
  describe(`audit log filters and export on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let member: TestAccount;
    let orgId: string;

    before(async () => {
      t = await startSystem(db);
      [owner, member] = await Promise.all([account(t), account(t)]);
      orgId = await createOrg(t, owner, 'Exported');
      await addMember(t, orgId, owner, member, 'member');
      // many entries at once, a minute apart back from now, with user agents a spreadsheet would run
      await sql`
        insert into audit_entry (organization_id, account_id, actor_account_id, action, target_type, target_id, ip, user_agent, details, created_at)
        select ${orgId}::uuid, ${owner.id}::uuid, ${owner.id}::uuid,
          case when i % 3 = 0 then 'org.renamed' else 'org.member-role-changed' end,
          'account', ${member.id}, '203.0.113.' || (i % 250)::text,
          case when i % 5 = 0 then '=HYPERLINK("http://evil.example","x")' when i % 7 = 0 then '-2+3, "quoted"' else 'Agent/' || i end,
          jsonb_build_object('n', i, 'note', case when i % 11 = 0 then '@SUM(A1)' else 'line' || chr(10) || 'two' end),
          now() - make_interval(mins => ${N} - i)
        from generate_series(1, ${N}) as i`.execute(t.system.database.db);
    });
    after(() => t?.stop());

    const pages = async (query: string) => {
      const all: unknown[] = [];
      let cursor: string | null = null;
      do {
        const res = await as(t, owner, 'GET', `/api/orgs/${orgId}/audit-log?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200, res.text);
        all.push(...res.body.entries);
        cursor = res.body['next-cursor'];
      } while (cursor);
      return all as Array<Record<string, any>>;
    };
    const exported = (query: string, headers: Record<string, string> = {}) =>
      t.client('GET', `/api/orgs/${orgId}/audit-log/export?${query}`, { headers: { authorization: `Bearer ${owner.token}`, ...headers } });

    it('exports every entry as NDJSON, equal to the API pages, newest first, with the file name', async () => {
      const api = await pages('');
      assert.ok(api.length > N);
      const res = await exported('format=ndjson');
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.equal(res.headers['content-type'], 'application/x-ndjson');
      assert.match(String(res.headers['content-disposition']), new RegExp(`^attachment; filename="audit-log-${orgId}-all-\\d{8}T\\d{6}Z\\.ndjson"$`));
      const lines = res.text.split('\n');
      assert.equal(lines.pop(), '', 'each line ends with a newline');
      const entries = lines.map((l) => JSON.parse(l));
      // the export's own entry came after the pages were read
      assert.equal(entries[0].action, 'audit-log.exported');
      assert.deepEqual(entries.slice(1), api);
    });

    it('exports CSV: the header row, one record per entry, formula-looking cells defused, gzip when accepted', async () => {
      const res = await exported('format=csv&action=org.renamed', { 'accept-encoding': 'gzip' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-encoding'], 'gzip');
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
      const rows = parseCsv(gunzipSync(res.raw).toString('utf8'));
      assert.deepEqual(rows[0], [
        'id',
        'created-at',
        'action',
        'actor-type',
        'actor-id',
        'actor-email',
        'target-type',
        'target-id',
        'ip',
        'user-agent',
        'details',
      ]);
      const api = await pages('&action=org.renamed');
      assert.equal(rows.length - 1, api.length);
      for (const [i, row] of rows.slice(1).entries()) {
        const e = api[i];
        assert.equal(row[0], e.id);
        assert.equal(row[1], e['created-at']);
        assert.equal(row[2], 'org.renamed');
        assert.deepEqual(row.slice(3, 6), ['account', owner.id, owner.email]);
        assert.deepEqual(row.slice(6, 9), ['account', member.id, e.ip]);
        const ua = e['user-agent'] as string;
        assert.equal(row[9], /^[=+\-@]/.test(ua) ? `'${ua}` : ua);
        const details = JSON.stringify(e.details);
        assert.equal(row[10], details);
        for (const cell of row) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, 'no cell starts a formula');
      }
      assert.ok(rows.some((r) => r[9].startsWith(`'=HYPERLINK`)));
      assert.ok(rows.some((r) => r[9] === `'-2+3, "quoted"`));
    });

    it('filters the page and the export alike: actions, actor, target, period', async () => {
      const all = await pages('');
      const from = all[5000]['created-at'] as string;
      const to = all[4000]['created-at'] as string;
      const period = await pages(`&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      assert.equal(period.length, 1000);
      assert.ok(period.every((e) => e['created-at'] >= from && e['created-at'] < to));
      const both = await pages('&action=org.renamed&action=org.created');
      assert.ok(both.every((e) => e.action === 'org.renamed' || e.action === 'org.created'));
      assert.ok(both.some((e) => e.action === 'org.created'));
      const byTarget = await pages(`&target-type=account&target-id=${member.id}&actor-id=${owner.id}`);
      assert.ok(byTarget.length >= N);
      assert.ok(byTarget.every((e) => e.target.id === member.id && e.actor['account-id'] === owner.id));
      assert.equal((await pages(`&actor-id=${member.id}&action=org.renamed`)).length, 0);
      const res = await exported(`format=ndjson&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      const lines = res.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(lines, period);
      const compact = (iso: string) =>
        new Date(iso)
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d{3}/, '');
      assert.equal(res.headers['content-disposition'], `attachment; filename="audit-log-${orgId}-${compact(from)}-${compact(to)}.ndjson"`);
    });

    it('refuses bad filters with a 400 naming them, a member with 403, and records each export', async () => {
      const bad = async (query: string, path: string) => {
        for (const route of ['audit-log', 'audit-log/export']) {
          const res = await as(t, owner, 'GET', `/api/orgs/${orgId}/${route}?${route.endsWith('export') ? 'format=csv&' : ''}${query}`);
          assert.equal(res.status, 400, `${route}?${query}: ${res.text}`);
          assert.ok(
            res.body.errors.some((e: { path: string }) => e.path === path),
            `${route}?${query} names ${path}: ${res.text}`,
          );
        }
      };
      await bad('from=yesterday', '/from');
      await bad('to=2026-13-01T00:00:00Z', '/to');
      await bad('from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z', '/to');
      await bad('actor-id=not-a-uuid', '/actor-id');
      await bad('action=Not%20An%20Action', '/action/0');
      const format = await as(t, owner, 'GET', `/api/orgs/${orgId}/audit-log/export?format=xlsx`);
      assert.equal(format.status, 400);
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${orgId}/audit-log/export`)).status, 400);
      assert.equal((await as(t, member, 'GET', `/api/orgs/${orgId}/audit-log/export?format=csv`)).status, 403);
      const recorded = await pages('&action=audit-log.exported');
      assert.ok(recorded.length >= 3);
      assert.deepEqual(recorded.find((e) => e.details.actions === 'org.renamed')?.details, { format: 'csv', actions: 'org.renamed' });
      assert.equal(recorded[0].actor['account-id'], owner.id);
    });
  });
}
