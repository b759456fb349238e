/**
 * The audit log's export and streams on PostgreSQL (docs/audit.md): the compiled server as `npm
 * start` runs it on a fresh database (BENCH_DATABASE_URL), a person with an organization, and
 * BENCH_AUDIT_ENTRIES (default 1,000,000) entries written straight into its log. Measured:
 * - the NDJSON export of all of them read as fast as the client can: entries a second, and the
 *   server's resident memory sampled every 50 ms, its peak over the settled RSS before.
 *   Targets: at least 30,000 entries a second, at most 30 MB of growth;
 * - an https stream to a receiver here while 200 audited changes a second are appended for 10 s
 *   (each in its own transaction, as changes are): it keeps up when everything has arrived within
 *   a few seconds of the last change.
 * Alone: `BENCH_DATABASE_URL=postgres://… node --import tsx bench/audit-export.ts` (after `npm run build:server`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freshDatabase } from './fresh-database.js';
import { procStatusMb } from './measure.js';
import { json, signedInServer } from './signed-in-server.js';

export const EXPORT_RATE_MIN = 30_000;
export const EXPORT_RSS_GROWTH_MAX_MB = 30;
export const STREAM_RATE = 200;
/** the stream keeps up when the last entry arrives within this long of the last change */
export const STREAM_CATCH_UP_MAX_S = 10;

export interface AuditExportFigures {
  entries: number;
  seconds: number;
  'entries-per-second': number;
  'rss-before-mb': number | null;
  'peak-rss-during-mb': number | null;
  'growth-mb': number | null;
  'stream-changes': number;
  'stream-delivered': number;
  'stream-catch-up-s': number | null;
}

export async function auditExportFigures(
  tmp: string,
  base: string,
  entries = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1_000_000),
): Promise<AuditExportFigures> {
  const database = await freshDatabase(base, 'bench_audit');
  const { server, token, stop } = await signedInServer(tmp, 'audit', {
    DATABASE_URL: database.url,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    AUDIT_STREAM_POLL_MS: '200',
  });
  const db = new pg.Client({ connectionString: database.url });
  const received = new Set<string>();
  let lastArrival = 0;
  const receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      for (const line of body.split('\n')) if (line) received.add((JSON.parse(line) as { id: string }).id);
      lastArrival = performance.now();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' };
  try {
    await db.connect();
    const me = await json(await fetch(`${server.url}/api/account/me`, { headers: auth }));
    await db.query('update account set email_verified = true where id = $1', [me.id]);
    const org = await json(await fetch(`${server.url}/api/orgs`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Audited' }) }));
    const orgId = String(org.id);
    await db.query(
      `insert into audit_entry (organization_id, account_id, actor_account_id, action, target_type, target_id, ip, user_agent, details, created_at)
       select $1::uuid, $2::uuid, $2::uuid, 'org.member-role-changed', 'account', $2, '203.0.113.7', 'Mozilla/5.0 (X11; Linux x86_64) bench',
         jsonb_build_object('role', 'admin', 'previous-role', 'member'), now() - make_interval(secs => $3 - i)
       from generate_series(1, $3) as i`,
      [orgId, me.id, entries],
    );
    await db.query('analyze audit_entry');
    await sleep(2000);
    const before = await procStatusMb(server.pid, 'VmRSS');
    let peak = before ?? 0;
    const sampler = setInterval(() => {
      void procStatusMb(server.pid, 'VmRSS').then((mb) => {
        peak = Math.max(peak, mb ?? 0);
      });
    }, 50);
    const t0 = performance.now();
    const res = await fetch(`${server.url}/api/orgs/${orgId}/audit-log/export?format=ndjson`, { headers: { authorization: `Bearer ${token}` } });
    let lines = 0;
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const byte of value) if (byte === 10) lines++;
    }
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    if (lines < entries) throw new Error(`bench: the export gave ${lines} lines for ${entries} entries`);

    // a stream while 200 changes a second are appended for 10 s, each in its own transaction
    const stream = await json(
      await fetch(`${server.url}/api/orgs/${orgId}/audit-log/streams`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kind: 'https', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/siem` }),
      }),
    );
    if (!stream.id) throw new Error('bench: no stream');
    const changes = STREAM_RATE * 10;
    const start = performance.now();
    for (let i = 0; i < changes; i++) {
      await db.query(`insert into audit_entry (organization_id, action, details) values ($1, 'org.renamed', '{"n": ${i}}')`, [orgId]);
      const due = start + ((i + 1) * 1000) / STREAM_RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const lastChange = performance.now();
    const deadline = lastChange + 30_000;
    // the stream's own creation entry is owed too
    while (received.size < changes + 1 && performance.now() < deadline) await sleep(50);
    return {
      entries,
      seconds: Math.round(seconds * 100) / 100,
      'entries-per-second': Math.round(lines / seconds),
      'rss-before-mb': before,
      'peak-rss-during-mb': peak,
      'growth-mb': before === null ? null : Math.round((peak - before) * 10) / 10,
      'stream-changes': changes,
      'stream-delivered': Math.max(0, received.size - 1),
      'stream-catch-up-s': received.size >= changes + 1 ? Math.round((Math.max(lastArrival, lastChange) - lastChange) / 10) / 100 : null,
    };
  } finally {
    receiver.close();
    await db.end().catch(() => undefined);
    await stop();
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const base = process.env.BENCH_DATABASE_URL;
  if (!base) throw new Error('BENCH_DATABASE_URL must name a PostgreSQL server');
  const dir = await mkdtemp(join(tmpdir(), 'bench-audit-'));
  try {
    console.log(await auditExportFigures(dir, base));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
