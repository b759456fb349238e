/**
 * The query plans of the admin account search on a large table (docs/admin.md): migrates the
 * PostgreSQL database given, fills `account` up to N rows (default 1,000,000; names and emails
 * spread over the alphabet, a third verified, one a second apart), then runs the searches the
 * admin API runs (email, name start, a later word of the name, newest first), through the
 * service itself, and prints EXPLAIN (ANALYZE, BUFFERS) of each.
 *
 *   node --import tsx bench/admin-search-plan.ts postgres://postgres@127.0.0.1:5432/admin_plan [N]
 *
 * Use a database of its own: rows are added to it.
 */
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { AdminService } from '../src/admin/service.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { DatabaseSchema } from '../src/db/schema.js';
import { createLogging } from '../src/logging/index.js';

const url = process.argv[2];
const total = Number(process.argv[3] ?? 1_000_000);
if (!url?.startsWith('postgres')) throw new Error('usage: admin-search-plan.ts <postgres URL> [rows]');

const config = loadConfig({ APP_ENV: 'test', DATABASE_URL: url, LOG_FILE: '' });
const { backend } = createLogging(config, {});
await (await openDatabase(config, backend)).close();

const captured: CompiledQuery[] = [];
const pool = new pg.Pool({ connectionString: url, max: 2 });
const db = new Kysely<DatabaseSchema>({
  dialect: new PostgresDialect({ pool }),
  log: (event) => {
    if (event.level === 'query') captured.push(event.query);
  },
});

const {
  rows: [{ n }],
} = await sql<{ n: string }>`select count(*) as n from account`.execute(db);
if (Number(n) < total) {
  const started = performance.now();
  await sql`
    insert into account (email, name, password_hash, email_verified, created_at)
    select 'user' || g || '.' || substr(md5(g::text), 1, 6) || '@example.com',
           (array['Alice','Bob','Carol','Dave','Erin','Frank','Grace','Heidi','Ivan','Judy','Mallory','Niaj','Olivia','Peggy','Rupert','Sybil','Trent','Victor','Walter','Zoe'])[1 + g % 20] || ' ' || substr(md5((g * 7)::text), 1, 8),
           null, g % 3 = 0, now() - g * interval '1 second'
    from generate_series(${Number(n) + 1}::int, ${total}::int) g`.execute(db);
  await sql`analyze account`.execute(db);
  await sql`analyze account_name_tail`.execute(db);
  console.log(`# filled account to ${total} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const admin = new AdminService({ db, refreshTokens: undefined as never, isPlatformAdmin: () => false, log: backend.logger('bench') });

async function explain(title: string, run: () => Promise<unknown>): Promise<void> {
  captured.length = 0;
  await run();
  console.log(`\n## ${title}\n`);
  for (const query of captured) {
    const { rows } = await pool.query(`explain (analyze, buffers, costs off) ${query.sql}`, query.parameters as unknown[]);
    console.log(rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
    console.log();
  }
}

await explain('q=user12 (email prefix: about 11,000 matches), first page of 20', () => admin.searchAccounts({ q: 'user12', limit: 20 }));
const page = await admin.searchAccounts({ q: 'user12', limit: 20 });
await explain('the same, next page (cursor)', () => admin.searchAccounts({ q: 'user12', limit: 20, cursor: page['next-cursor']! }));
await explain('q=grace (name prefix: 50,000 matches, none by email), first page of 20', () => admin.searchAccounts({ q: 'grace', limit: 20 }));
// the names' second word is 8 hex digits: a later word of the name (account_name_tail, migration 0019)
await explain('q=beef (a later word of the name: about 15 matches, none by email or name start), first page of 20', () =>
  admin.searchAccounts({ q: 'beef', limit: 20 }),
);
const words = await admin.searchAccounts({ q: 'ab', limit: 20 });
await explain('q=ab (a later word: about 3,900 matches), the next page (cursor)', () =>
  admin.searchAccounts({ q: 'ab', limit: 20, cursor: words['next-cursor']! }),
);
await explain('no q: newest first, a page deep in the list', async () => {
  let cursor: string | undefined;
  for (let i = 0; i < 5; i++) cursor = (await admin.searchAccounts({ limit: 100, cursor }))['next-cursor'] ?? undefined;
  captured.length = 0;
  await admin.searchAccounts({ limit: 20, cursor });
});

await db.destroy();
await backend.close();
