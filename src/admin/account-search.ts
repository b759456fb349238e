/**
 * The operator's account search (docs/admin.md, "Search that stays fast on a million accounts"):
 * by the start of the email, then of the name, then of a later word of the name (`zq12` finds
 * `Quasar Zq12`: people search surnames); without `q`, the newest first. Each phase is an index
 * range read in that index's order (search.ts).
 */
import { sql, type SqlBool } from 'kysely';
import type { DB } from '../db/database.js';
import type { AccountSearch, AdminAccount, AdminAccountPage } from './schemas.js';
import { c, encodeCursor, exactTime, inRange, iso, keysetPage, pageCursor, prefixRange, type Phase } from './search.js';

/** The columns of an account the console shows, with the keys its searches order by. */
export function accountsQuery(db: DB) {
  return db.selectFrom('account as a').select([
    'a.id',
    'a.email',
    'a.name',
    'a.created_at',
    'a.email_verified',
    'a.locked_at',
    'a.two_factor_enabled',
    // its own sessions: an impersonation is not the account being seen
    sql<Date | null>`(select max(f.last_used_at) from refresh_family f where f.account_id = a.id and f.actor_account_id is null)`.as('last_seen_at'),
    sql<string>`lower(a.name)`.as('name_key'),
    exactTime('a.created_at').as('created_key'),
  ]);
}

type AccountRow = Awaited<ReturnType<ReturnType<typeof accountsQuery>['execute']>>[number];
/** a row of the later-word phase also has the matching tail of its name (its key) */
type Row = AccountRow & { tail_key?: string };

function newestFirst(db: DB): Phase<Row> {
  return {
    id: 'c',
    read: (limit, after) => {
      let q = accountsQuery(db);
      if (after) q = q.where(sql<SqlBool>`(a.created_at, a.id) < (${after.k}::timestamptz, ${after.i}::uuid)`);
      return q.orderBy('a.created_at', 'desc').orderBy('a.id', 'desc').limit(limit).execute();
    },
    keyOf: (row) => ({ k: row.created_key, i: row.id }),
  };
}

function prefixPhases(db: DB, query: string): Array<Phase<Row>> {
  const range = prefixRange(query);
  const email = c(sql.ref('a.email'));
  const name = c(sql`lower(a.name)`);
  return [
    {
      id: 'e',
      read: (limit, after) => {
        let q = accountsQuery(db).where(inRange(email, range));
        if (after) q = q.where(sql<SqlBool>`${email} > ${after.k}`);
        return q.orderBy(email).limit(limit).execute();
      },
      keyOf: (row) => ({ k: row.email }),
    },
    {
      id: 'n',
      read: (limit, after) => {
        let q = accountsQuery(db)
          .where('a.name', 'is not', null)
          .where(inRange(name, range))
          .where(sql<SqlBool>`not (${inRange(email, range)})`);
        if (after) q = q.where(sql<SqlBool>`(${name}, a.id) > (${after.k}::text collate "C", ${after.i ?? null}::uuid)`);
        return q.orderBy(name).orderBy('a.id').limit(limit).execute();
      },
      keyOf: (row) => ({ k: row.name_key, i: row.id }),
    },
    {
      // a later word: the name from that word on (account_name_tail, migration 0019), read in (tail, account) order
      id: 'w',
      read: (limit, after) => {
        const tail = sql<string>`t.tail`;
        let q = accountsQuery(db)
          .innerJoin('account_name_tail as t', 't.account_id', 'a.id')
          .select('t.tail as tail_key')
          .where(inRange(tail, range))
          // found by an earlier phase already
          .where(sql<SqlBool>`not (${inRange(email, range)})`)
          .where(sql<SqlBool>`not (${inRange(name, range)})`)
          // an account with two matching words ("Ann Zq1 Zq2" for "zq"): listed once, at its first
          .where(
            sql<SqlBool>`not exists (select 1 from account_name_tail t2 where t2.account_id = t.account_id and t2.tail < t.tail and t2.tail >= ${range.lo})`,
          );
        if (after) q = q.where(sql<SqlBool>`(t.tail, t.account_id) > (${after.k}::text collate "C", ${after.i ?? null}::uuid)`);
        return q.orderBy('t.tail').orderBy('t.account_id').limit(limit).execute();
      },
      keyOf: (row) => ({ k: row.tail_key ?? '', i: row.id }),
    },
  ];
}

export async function searchAccounts(db: DB, query: AccountSearch): Promise<AdminAccountPage> {
  const phases = query.q === undefined || query.q.trim() === '' ? [newestFirst(db)] : prefixPhases(db, query.q);
  const cursor = pageCursor(query.cursor, phases, 'e');
  const { rows, next } = await keysetPage(phases, query.limit ?? 20, cursor);
  return { accounts: rows.map(toAdminAccount), 'next-cursor': next ? encodeCursor(next) : null };
}

export function toAdminAccount(row: {
  id: string;
  email: string;
  name: string | null;
  created_at: Date;
  email_verified: boolean;
  locked_at: Date | null;
  two_factor_enabled: boolean;
  last_seen_at: Date | string | null;
}): AdminAccount {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    'created-at': iso(row.created_at)!,
    'email-verified': row.email_verified,
    locked: row.locked_at !== null,
    'two-factor-enabled': row.two_factor_enabled,
    'last-seen-at': iso(row.last_seen_at),
  };
}
