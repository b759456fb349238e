/**
 * Named prepared statements on PostgreSQL: each parameterised text is prepared once per
 * connection, and a table changed underneath a prepared `select *` (another instance's
 * migration) does not break queries outside a transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { PreparedStatementClient } from '../../src/db/prepared-client.js';
import { testDatabases } from '../support/system.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

describe('PG_PREPARED_STATEMENTS', () => {
  it('is on by default, can be turned off, and refuses anything else naming the variable', () => {
    assert.equal(loadConfig({}).pgPreparedStatements, true);
    assert.equal(loadConfig({ PG_PREPARED_STATEMENTS: 'off' }).pgPreparedStatements, false);
    assert.throws(() => loadConfig({ PG_PREPARED_STATEMENTS: 'yes' }), /PG_PREPARED_STATEMENTS/);
  });
});

describe('PreparedStatementClient', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let database: { url: string; drop(): Promise<void> };
  let client: PreparedStatementClient;
  let other: pg.Client;

  before(async () => {
    database = await postgres!.create();
    client = new PreparedStatementClient({ connectionString: database.url });
    other = new pg.Client({ connectionString: database.url });
    await client.connect();
    await other.connect();
    await other.query('create table item (id int primary key, label text)');
    await other.query(`insert into item values (1, 'one'), (2, 'two')`);
  });

  after(async () => {
    await client?.end();
    await other?.end();
    await database?.drop();
  });

  const prepared = async () => (await client.query('select name, statement from pg_prepared_statements')).rows as { name: string; statement: string }[];

  it('prepares a parameterised text once and reuses it', async () => {
    const text = 'select * from item where id = $1';
    assert.deepEqual((await client.query(text, [1])).rows, [{ id: 1, label: 'one' }]);
    assert.deepEqual((await client.query(text, [2])).rows, [{ id: 2, label: 'two' }]);
    const statements = (await prepared()).filter((s) => s.statement === text);
    assert.equal(statements.length, 1, 'one server-side statement for the text');
  });

  it('sends texts without parameters, configs and callbacks unchanged', async () => {
    const before = (await prepared()).length;
    assert.equal((await client.query('select 1 as one', [])).rows[0].one, 1);
    assert.equal((await client.query({ text: 'select $1::int as n', values: [7] })).rows[0].n, 7);
    const viaCallback = await new Promise<number>((resolve, reject) => {
      client.query('select $1::int as n', [8], (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res.rows[0].n)));
    });
    assert.equal(viaCallback, 8);
    assert.equal((await prepared()).length, before, 'none of these was prepared');
  });

  it('survives a column added by someone else outside a transaction', async () => {
    const text = 'select * from item where id = $1';
    await client.query(text, [1]);
    await other.query('alter table item add column extra text');
    const rows = (await client.query(text, [1])).rows;
    assert.deepEqual(rows, [{ id: 1, label: 'one', extra: null }]);
  });

  it('inside a transaction the error stands, and the next transaction works', async () => {
    const text = 'select * from item where id = $1 and id > 0';
    await client.query(text, [2]);
    await other.query('alter table item add column more text');
    await client.query('begin');
    await assert.rejects(client.query(text, [2]), (err: { code?: string }) => err.code === '0A000');
    await client.query('rollback');
    await client.query('begin');
    assert.deepEqual((await client.query(text, [2])).rows, [{ id: 2, label: 'two', extra: null, more: null }]);
    await client.query('commit');
  });
});
