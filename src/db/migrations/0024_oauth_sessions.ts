import { sql, type Kysely } from 'kysely';

/**
 * The OAuth provider's sessions and grants follow the product's sessions (docs/oauth.md,
 * "Sessions"; docs/security.md, "The OAuth provider"):
 * - `oauth_model.session_id`: for the provider's `Session` records, the product session (refresh
 *   family) whose sign-in made it; ending that session deletes it, and one whose session is gone
 *   counts as signed out.
 * - `oauth_grant.session_id`: the product session that consented; ending it ends the grant.
 * - `oauth_grant.revoked_reason` gains `session-ended` (its consenting session ended),
 *   `password-changed` and `organization-deleted` (its app's organization was deleted).
 * - deleting an organization ends its apps' grants in the same transaction (a trigger: the API's
 *   deletion and an account's deletion of the organizations it alone owned both reach it).
 * - `signing_key.purpose`: `access` (the product's and the API's access tokens) or `id-token`
 *   (the provider's ID tokens, every algorithm): an app that registers EdDSA ID tokens gets them
 *   signed with an EdDSA key of their own, never the one that signs sessions' access tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_model').addColumn('session_id', 'uuid').execute();
  await sql`create index oauth_model_session_idx on oauth_model (session_id) where session_id is not null`.execute(db);
  await db.schema.alterTable('oauth_grant').addColumn('session_id', 'uuid').execute();
  await sql`create index oauth_grant_session_idx on oauth_grant (session_id) where session_id is not null and revoked_at is null`.execute(db);
  await sql`alter table oauth_grant drop constraint if exists oauth_grant_revoked_reason_check`.execute(db);
  await sql`alter table oauth_grant add constraint oauth_grant_revoked_reason_check check (revoked_reason in
    ('account', 'app-deleted', 'refresh-token-reuse', 'expired', 'session-ended', 'password-changed', 'organization-deleted'))`.execute(db);
  // an organization's deletion (the API's, or an account's deletion taking those it alone owned)
  // ends its apps' grants in the deleting transaction, notified like ended sessions, as deleting
  // one app does (src/oauth/apps.ts): the cascade would delete the apps and leave their tokens live
  await sql`create function organization_oauth_grants_end() returns trigger language plpgsql as $$
    declare
      ended record;
    begin
      for ended in
        update oauth_grant set revoked_at = clock_timestamp(), revoked_reason = 'organization-deleted'
        where revoked_at is null and client_id in (select client_id from oauth_app where organization_id = old.id)
        returning id, account_id, client_id
      loop
        delete from oauth_model where grant_id = ended.id or (model = 'Grant' and id = ended.id);
        -- the person's own log, as for every grant that ends (src/oauth/grants.ts)
        insert into audit_entry (organization_id, account_id, action, target_type, target_id, details)
        select o.id, ended.account_id, 'oauth-grant.revoked', 'oauth-grant', ended.id,
               jsonb_build_object('client-id', ended.client_id, 'reason', 'organization-deleted')
        from (select 1) one left join organization o on o.personal_account_id = ended.account_id and o.id <> old.id;
        perform pg_notify('session_revoked', ended.id);
      end loop;
      return old;
    end $$`.execute(db);
  await sql`create trigger organization_oauth_grants_end before delete on organization
    for each row execute function organization_oauth_grants_end()`.execute(db);
  await db.schema
    .alterTable('signing_key')
    .addColumn('purpose', 'text', (c) => c.notNull().defaultTo('access').check(sql`purpose in ('access', 'id-token')`))
    .execute();
  await sql`update signing_key set purpose = 'id-token' where alg <> 'EdDSA'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger organization_oauth_grants_end on organization`.execute(db);
  await sql`drop function organization_oauth_grants_end()`.execute(db);
  await db.schema.alterTable('signing_key').dropColumn('purpose').execute();
  await sql`alter table oauth_grant drop constraint if exists oauth_grant_revoked_reason_check`.execute(db);
  await sql`update oauth_grant set revoked_reason = 'account' where revoked_reason in ('session-ended', 'password-changed', 'organization-deleted')`.execute(
    db,
  );
  await sql`alter table oauth_grant add constraint oauth_grant_revoked_reason_check check (revoked_reason in ('account', 'app-deleted', 'refresh-token-reuse', 'expired'))`.execute(
    db,
  );
  await db.schema.alterTable('oauth_grant').dropColumn('session_id').execute();
  await db.schema.alterTable('oauth_model').dropColumn('session_id').execute();
}
