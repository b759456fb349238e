import { sql, type Kysely } from 'kysely';

/**
 * The operator's account search by a later word of the name (docs/admin.md, "Search that stays
 * fast on a million accounts"): `Quasar Zq12` is found by `zq12` as by `quasar`.
 * - `account_name_tail`: one row per later word of an account's name, holding the name from that
 *   word on, lower-cased, its words joined by one space (`zq12` for `Quasar Zq12`; `luc picard`
 *   and `picard` for `Jean-Luc Picard`). A word starts after whitespace or a hyphen. The first
 *   word is the name itself, searched by `account_name_prefix_idx` (0016).
 * - The primary key `(tail, account_id)` in the "C" collation: a prefix is an index range read in
 *   order, a page of it `limit` index entries, as for email and name. Not chosen: a GIN index on
 *   an array of words (finds whole words only), pg_trgm (an extension to load in PGlite and to
 *   create on PostgreSQL; its GIN index neither reads in order nor serves prefixes under three
 *   characters, so a page would sort every match).
 * - Triggers keep the rows in step with `account.name` whatever writes it (sign-up, settings,
 *   SCIM, providers); a dump restores the rows as data and creates the triggers after them.
 */
/** The tails (above) of the name `name` (an SQL expression), as rows of `tail`. */
const tailsOf = (name: string) => `
  select distinct array_to_string(s.words[i:], ' ') as tail
  from (select regexp_split_to_array(regexp_replace(lower(${name}), '^[[:space:]-]+|[[:space:]-]+$', '', 'g'), '[[:space:]-]+') as words) s,
    generate_subscripts(s.words, 1) as i
  -- the first word starts the name itself, searched by its own index
  where i > 1`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_name_tail')
    .addColumn('tail', sql`text collate "C"`, (c) => c.notNull())
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('account_name_tail_pkey', ['tail', 'account_id'])
    .execute();
  // the cascade on delete, the rewrite on rename, and the search's "its first matching tail only"
  await sql`create index account_name_tail_account_idx on account_name_tail (account_id, tail)`.execute(db);
  // the expression in the trigger's own statement (planned once per session), not in a SQL
  // function, which is planned at each call: 80 µs a row instead of 170 (20,000 inserts, PostgreSQL 15)
  await sql
    .raw(`create function account_name_tails_sync() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' then
        delete from account_name_tail where account_id = new.id;
      end if;
      insert into account_name_tail (tail, account_id) select t.tail, new.id from (${tailsOf('new.name')}) t;
      return null;
    end $$`)
    .execute(db);
  await sql`create trigger account_name_tails_insert after insert on account
    for each row when (new.name is not null) execute function account_name_tails_sync()`.execute(db);
  await sql`create trigger account_name_tails_update after update of name on account
    for each row when (old.name is distinct from new.name) execute function account_name_tails_sync()`.execute(db);
  await sql
    .raw(`insert into account_name_tail (tail, account_id)
    select t.tail, a.id from account a, lateral (${tailsOf('a.name')}) t where a.name is not null`)
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists account_name_tails_update on account`.execute(db);
  await sql`drop trigger if exists account_name_tails_insert on account`.execute(db);
  await sql`drop function if exists account_name_tails_sync()`.execute(db);
  await db.schema.dropTable('account_name_tail').ifExists().execute();
}
