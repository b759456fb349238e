import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { dumpPglite } from '../../src/db/dump.js';
import { DumpFormatError, prepareDump } from '../../src/db/dump-sql.js';

const HEADER = '--\n-- PostgreSQL database dump\n--\n\n';

describe('preparing a dump for its target', () => {
  const pg15 = new Set(['statement_timeout', 'lock_timeout', 'client_encoding']);

  it("drops pg_dump's \\restrict lines and the preamble settings the target lacks, and nothing in the data", () => {
    const data = "INSERT INTO public.note VALUES ('a\nSET transaction_timeout = 0;\n\\unrestrict abc');";
    const dump = `\\restrict abc\n${HEADER}SET statement_timeout = 0;\nSET transaction_timeout = 0;\n\n--\n-- Name: note; Type: TABLE\n--\n${data}\n\n--\n-- PostgreSQL database dump complete\n--\n\n\\unrestrict abc\n`;
    const prepared = prepareDump(dump, pg15);
    assert.ok(!prepared.includes('\\restrict'));
    assert.ok(prepared.includes('SET statement_timeout = 0;'));
    assert.ok(!prepared.startsWith('\\'));
    assert.ok(prepared.includes(data), 'the data is untouched');
    assert.equal(prepared.split('SET transaction_timeout').length, 2, 'only the preamble line is gone');
    assert.ok(!prepared.trimEnd().endsWith('abc'));
  });

  it('refuses what is not a plain pg_dump script, and COPY data only psql can load', () => {
    assert.throws(() => prepareDump('create table x ();', pg15), DumpFormatError);
    assert.throws(() => prepareDump(`${HEADER}--\n-- Name: x\n--\nCOPY public.x (a) FROM stdin;\n1\n\\.\n`, pg15), /COPY \.\.\. FROM stdin/);
    assert.throws(() => prepareDump(`${HEADER}\\connect other\n`, pg15), /meta-command "\\connect"/);
  });
});

describe('dumping a PGlite instance in use', () => {
  it('leaves its one session writable and its settings as they were', async () => {
    const pg = new PGlite();
    try {
      await pg.exec("create table note (id bigserial primary key, body text); insert into note (body) values ('it''s');");
      await pg.exec("set statement_timeout = '5s'");
      const settings = "select name, setting from pg_settings where source = 'session' order by 1";
      const before = (await pg.query(settings)).rows;
      const dump = await dumpPglite(pg);
      assert.match(dump, /INSERT INTO public\.note VALUES\s+\(1, 'it''s'\);/);
      assert.equal(pg.isInTransaction(), false);
      assert.deepEqual((await pg.query(settings)).rows, before);
      await pg.query('insert into note (body) values ($1)', ['after']);
      assert.equal((await pg.query<{ n: number }>('select count(*)::int as n from note')).rows[0]!.n, 2);
    } finally {
      await pg.close();
    }
  });
});
