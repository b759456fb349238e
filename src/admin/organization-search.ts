/**
 * The operator's organization search (docs/admin.md): by the start of the name, then of the
 * slug; without `q`, the newest first. Each phase is an index range read in that index's order
 * (search.ts), as in the account search (account-search.ts).
 */
import { sql, type SqlBool } from 'kysely';
import type { DB } from '../db/database.js';
import type { AdminOrganization, AdminOrganizationPage, OrgSearch } from './schemas.js';
import { c, encodeCursor, exactTime, inRange, iso, keysetPage, pageCursor, prefixRange, type Phase } from './search.js';

/** Organizations by name prefix, then by slug prefix; without `q`, newest first. */
export async function searchOrganizations(db: DB, query: OrgSearch): Promise<AdminOrganizationPage> {
  const base = () =>
    db
      .selectFrom('organization as o')
      .select([
        'o.id',
        'o.name',
        'o.slug',
        'o.personal',
        'o.created_at',
        'o.subscription_status',
        'o.subscription_plan',
        'o.subscription_period_end',
        'o.subscription_cancel_at_period_end',
        sql<string>`(select count(*) from membership m where m.organization_id = o.id)`.as('member_count'),
        sql<string>`lower(o.name)`.as('name_key'),
        exactTime('o.created_at').as('created_key'),
      ]);
  type Row = Awaited<ReturnType<ReturnType<typeof base>['execute']>>[number];
  const name = c(sql`lower(o.name)`);
  const slug = c(sql.ref('o.slug'));
  let phases: Array<Phase<Row>>;
  if (query.q === undefined || query.q.trim() === '') {
    phases = [
      {
        id: 'c',
        read: (limit, after) => {
          let q = base();
          if (after) q = q.where(sql<SqlBool>`(o.created_at, o.id) < (${after.k}::timestamptz, ${after.i ?? null}::uuid)`);
          return q.orderBy('o.created_at', 'desc').orderBy('o.id', 'desc').limit(limit).execute();
        },
        keyOf: (row) => ({ k: row.created_key, i: row.id }),
      },
    ];
  } else {
    const range = prefixRange(query.q);
    phases = [
      {
        id: 'n',
        read: (limit, after) => {
          let q = base().where(inRange(name, range));
          if (after) q = q.where(sql<SqlBool>`(${name}, o.id) > (${after.k}::text collate "C", ${after.i ?? null}::uuid)`);
          return q.orderBy(name).orderBy('o.id').limit(limit).execute();
        },
        keyOf: (row) => ({ k: row.name_key, i: row.id }),
      },
      {
        id: 's',
        read: (limit, after) => {
          let q = base()
            .where(inRange(slug, range))
            .where(sql<SqlBool>`not (${inRange(name, range)})`);
          if (after) q = q.where(sql<SqlBool>`${slug} > ${after.k}`);
          return q.orderBy(slug).limit(limit).execute();
        },
        keyOf: (row) => ({ k: row.slug }),
      },
    ];
  }
  const cursor = pageCursor(query.cursor, phases, 's');
  const { rows, next } = await keysetPage(phases, query.limit ?? 20, cursor);
  return {
    organizations: rows.map(
      (o): AdminOrganization => ({
        id: o.id,
        name: o.name,
        slug: o.slug,
        personal: o.personal,
        'created-at': iso(o.created_at)!,
        'member-count': Number(o.member_count),
        subscription: {
          status: o.subscription_status,
          plan: o.subscription_plan,
          'current-period-end': iso(o.subscription_period_end),
          'cancel-at-period-end': o.subscription_cancel_at_period_end,
        },
      }),
    ),
    'next-cursor': next ? encodeCursor(next) : null,
  };
}
