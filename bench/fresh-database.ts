/** A fresh PostgreSQL database on the server of `base` (BENCH_DATABASE_URL), dropped by `drop`: what the PostgreSQL benches run on. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export async function freshDatabase(base: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
