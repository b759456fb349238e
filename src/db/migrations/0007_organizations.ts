import { sql, type Kysely } from 'kysely';

/**
 * Organizations (docs/api.md, "Organizations"): workspaces with members in three roles and
 * emailed invitations. The rules live in the database, not only in the code:
 * - one membership per account and organization (the primary key), a role from the three (a check);
 * - every organization keeps at least one owner: a deferred constraint trigger checks, at commit,
 *   each organization a transaction created or whose memberships it changed. It locks the
 *   organization's row first, so two transactions each demoting or removing the other owner are
 *   checked one after the other and the second sees the first (read committed takes a new
 *   snapshot per statement): one of them fails;
 * - one pending invitation per organization and address (a partial unique index);
 * - one personal organization per account (`personal_account_id`, unique); deleting an account
 *   deletes it, and every other organization the account alone owns (docs/api.md, "Account
 *   lifecycle").
 * Existing accounts get their personal organization here, with their subscription copied
 * (billing moves to the organization later; `user-account.subscription` is the personal one's).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('slug', 'text', (c) => c.notNull().unique().check(sql`slug ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$'`))
    .addColumn('personal', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('personal_account_id', 'uuid', (c) => c.unique().references('account.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('subscription_status', 'text', (c) =>
      c.notNull().defaultTo('none').check(sql`subscription_status in ('none','trialing','active','past-due','canceled')`),
    )
    .addColumn('subscription_plan', 'text')
    .addColumn('subscription_period_end', 'timestamptz')
    .addCheckConstraint('organization_personal_has_account', sql`personal = (personal_account_id is not null)`)
    .execute();

  await db.schema
    .createTable('membership')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('account_id', 'uuid', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn('joined_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('membership_pkey', ['organization_id', 'account_id'])
    .execute();
  // "my organizations" reads by account
  await db.schema.createIndex('membership_account_idx').on('membership').column('account_id').execute();

  await db.schema
    .createTable('invitation')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organization.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull().check(sql`email = lower(email)`))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('accepted_by', 'uuid', (c) => c.references('account.id').onDelete('set null'))
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('invitation_accepted_or_revoked', sql`accepted_at is null or revoked_at is null`)
    .execute();
  await sql`create unique index invitation_pending_idx on invitation (organization_id, email)
    where accepted_at is null and revoked_at is null`.execute(db);

  // existing accounts: a personal organization each, with the account as owner
  await sql`insert into organization (name, slug, personal, personal_account_id, created_at, subscription_status, subscription_plan, subscription_period_end)
    select left(coalesce(a.name, split_part(a.email, '@', 1)), 100), 'personal-' || replace(a.id::text, '-', ''), true, a.id, a.created_at,
           a.subscription_status, a.subscription_plan, a.subscription_period_end
    from account a`.execute(db);
  await sql`insert into membership (organization_id, account_id, role, joined_at)
    select o.id, o.personal_account_id, 'owner', o.created_at from organization o where o.personal`.execute(db);

  await sql`create function organization_owner_guard() returns trigger language plpgsql as $$
    declare
      org uuid;
    begin
      if tg_table_name = 'organization' then org := new.id; else org := old.organization_id; end if;
      -- one check per organization at a time: the second transaction waits here and then sees the first's commit
      perform 1 from organization where id = org for update;
      if found and not exists (select 1 from membership where organization_id = org and role = 'owner') then
        raise exception 'organization % would have no owner', org
          using errcode = '23514', constraint = 'organization_has_owner', table = 'membership';
      end if;
      return null;
    end $$`.execute(db);
  await sql`create constraint trigger membership_owner_guard after update or delete on membership
    deferrable initially deferred for each row execute function organization_owner_guard()`.execute(db);
  await sql`create constraint trigger organization_owner_guard after insert on organization
    deferrable initially deferred for each row execute function organization_owner_guard()`.execute(db);

  // an account's deletion takes the organizations it alone owns with it (the personal one by its foreign key)
  await sql`create function account_sole_owned_organizations_delete() returns trigger language plpgsql as $$
    begin
      delete from organization o where o.id in (
        select m.organization_id from membership m
        where m.account_id = old.id and m.role = 'owner'
          and not exists (select 1 from membership other
                          where other.organization_id = m.organization_id and other.role = 'owner' and other.account_id <> old.id));
      return old;
    end $$`.execute(db);
  await sql`create trigger account_sole_owned_organizations_delete before delete on account
    for each row execute function account_sole_owned_organizations_delete()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger account_sole_owned_organizations_delete on account`.execute(db);
  await sql`drop function account_sole_owned_organizations_delete()`.execute(db);
  await db.schema.dropTable('invitation').execute();
  await db.schema.dropTable('membership').execute();
  await db.schema.dropTable('organization').execute();
  await sql`drop function organization_owner_guard()`.execute(db);
}
