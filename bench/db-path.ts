/**
 * The database path alone, on PostgreSQL: this process's CPU per account-by-id query with 50
 * queries in flight, through (1) Kysely over pg's pool (Kysely's own PostgresDialect), (2) the
 * project's pipelined dialect, (3) the same with the compiled query reused, and (4) a bare pg
 * client in pipeline mode without Kysely. Interleaved over rounds; medians.
 *
 * Used by bench/run.ts; alone: `node --import tsx bench/db-path.ts postgres://...`
 */
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { PipelinedDialect } from '../src/db/pipelined-dialect.js';
import { PreparedStatementClient } from '../src/db/prepared-client.js';

type Variant = { name: string; query(id: string): Promise<unknown>; close(): Promise<void> };

const COLUMNS = ['id', 'email', 'name', 'created_at'] as const;
interface Schema {
  bench_account: { id: string; email: string; name: string | null; created_at: Date };
}

async function variants(url: string): Promise<Variant[]> {
  const pool = () => new pg.Pool({ connectionString: url, max: 10, Client: PreparedStatementClient });
  const pooled = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: pool() }) });
  const pipelined = new Kysely<Schema>({
    dialect: new PipelinedDialect({ client: { connectionString: url }, sharedConnections: 2, pool: pool(), preparedStatements: true, stallTimeoutMs: 10_000 }),
  });
  const byId = (db: Kysely<Schema>, id: string) => db.selectFrom('bench_account').select(COLUMNS).where('id', '=', id);
  const compiled: CompiledQuery = byId(pipelined, '').compile();
  const bare = [0, 1].map(() => new pg.Client({ connectionString: url, pipeline: true }));
  await Promise.all(bare.map((c) => c.connect()));
  let turn = 0;
  return [
    { name: 'kysely + pg pool', query: (id) => byId(pooled, id).executeTakeFirst(), close: () => pooled.destroy() },
    { name: 'kysely + pipelined', query: (id) => byId(pipelined, id).executeTakeFirst(), close: () => pipelined.destroy() },
    { name: 'pipelined, compiled once', query: (id) => pipelined.executeQuery({ ...compiled, parameters: [id] }), close: async () => undefined },
    {
      name: 'bare pg pipeline',
      query: (id) => bare[turn++ & 1].query({ name: 'bench_by_id', text: compiled.sql, values: [id] }),
      close: async () => {
        await Promise.all(bare.map((c) => c.end()));
      },
    },
  ];
}

/** CPU µs per query and queries per second, `total` queries with `inFlight` at a time */
async function measure(variant: Variant, ids: string[], total: number, inFlight: number) {
  let sent = 0;
  const worker = async () => {
    while (sent < total) {
      const row = await variant.query(ids[sent++ % ids.length]);
      if (!row) throw new Error(`${variant.name}: no row`);
    }
  };
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wallS = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / total, qps: total / wallS };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function dbPath(url: string, options: { rounds?: number; total?: number; inFlight?: number } = {}) {
  const { rounds = 5, total = 10_000, inFlight = 50 } = options;
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(
    'create table if not exists bench_account (id uuid primary key, email text not null, name text, created_at timestamptz not null default now())',
  );
  const ids = Array.from({ length: 100 }, () => randomUUID());
  await setup.query('insert into bench_account (id, email) select unnest($1::uuid[]), unnest($1::uuid[])::text', [ids]);
  const list = await variants(url);
  const samples = new Map<string, { cpuUs: number[]; qps: number[] }>(list.map((v) => [v.name, { cpuUs: [], qps: [] }]));
  try {
    for (const v of list) await measure(v, ids, 2000, inFlight); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const v of list) {
        const r = await measure(v, ids, total, inFlight);
        samples.get(v.name)!.cpuUs.push(r.cpuUs);
        samples.get(v.name)!.qps.push(r.qps);
      }
    }
  } finally {
    for (const v of list) await v.close();
    await setup.query('drop table bench_account');
    await setup.end();
  }
  return Object.fromEntries(
    [...samples].map(([name, s]) => [name, { 'cpu-us-per-query': +median(s.cpuUs).toFixed(1), 'queries-per-s': Math.round(median(s.qps)) }]),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.argv[2] ?? process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error('usage: db-path.ts postgres://...');
  console.log(await dbPath(url));
}
