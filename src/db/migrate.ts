/**
 * Versioned migrations, listed here in order. Kysely's migrator takes a PostgreSQL advisory
 * lock for the run, so several instances starting together migrate once.
 */
import { Migrator, type Kysely, type MigrationProvider, type Migration } from 'kysely';
import * as m0001 from './migrations/0001_accounts.js';
import * as m0002 from './migrations/0002_refresh_tokens.js';
import * as m0003 from './migrations/0003_payment_events.js';
import * as m0004 from './migrations/0004_mail_outbox.js';
import * as m0005 from './migrations/0005_refresh_family_revoked.js';
import * as m0006 from './migrations/0006_account_lifecycle.js';
import * as m0007 from './migrations/0007_organizations.js';
import * as m0008 from './migrations/0008_audit_log.js';
import * as m0009 from './migrations/0009_billing.js';
import * as m0010 from './migrations/0010_api_keys.js';
import * as m0011 from './migrations/0011_two_factor_passkeys.js';
import * as m0012 from './migrations/0012_identities.js';
import * as m0013 from './migrations/0013_hardening.js';
import * as m0015 from './migrations/0015_webhooks.js';
import * as m0016 from './migrations/0016_admin.js';
import * as m0017 from './migrations/0017_sign_in.js';
import * as m0018 from './migrations/0018_sso.js';
import * as m0019 from './migrations/0019_name_word_search.js';
import * as m0020 from './migrations/0020_oauth.js';
import * as m0021 from './migrations/0021_usage.js';
import * as m0022 from './migrations/0022_usage_billable.js';
import * as m0023 from './migrations/0023_subscription_order.js';
import * as m0024 from './migrations/0024_oauth_sessions.js';
import * as m0025 from './migrations/0025_mcp.js';
import * as m0026 from './migrations/0026_files.js';
import * as m0027 from './migrations/0027_notifications.js';
import * as m0028 from './migrations/0028_audit_streams.js';
import * as m0029 from './migrations/0029_account_locale.js';
import type { Logger } from '../logging/logger.js';

export const MIGRATIONS: Record<string, Migration> = {
  '0001_accounts': m0001,
  '0002_refresh_tokens': m0002,
  '0003_payment_events': m0003,
  '0004_mail_outbox': m0004,
  '0005_refresh_family_revoked': m0005,
  '0006_account_lifecycle': m0006,
  '0007_organizations': m0007,
  '0008_audit_log': m0008,
  '0009_billing': m0009,
  '0010_api_keys': m0010,
  '0011_two_factor_passkeys': m0011,
  '0012_identities': m0012,
  '0013_hardening': m0013,
  '0015_webhooks': m0015,
  '0016_admin': m0016,
  '0017_sign_in': m0017,
  '0018_sso': m0018,
  '0019_name_word_search': m0019,
  '0020_oauth': m0020,
  '0021_usage': m0021,
  '0022_usage_billable': m0022,
  '0023_subscription_order': m0023,
  '0024_oauth_sessions': m0024,
  '0025_mcp': m0025,
  '0026_files': m0026,
  '0027_notifications': m0027,
  '0028_audit_streams': m0028,
  '0029_account_locale': m0029,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Applies every pending migration; throws (after logging) if one fails. */
export async function migrateToLatest(db: Kysely<unknown>, log: Logger): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const applied: string[] = [];
  for (const r of results ?? []) {
    if (r.status === 'Success') {
      applied.push(r.migrationName);
      log.info('db/migrated', `Applied migration ${r.migrationName}`, { migration: r.migrationName });
    } else if (r.status === 'Error') {
      log.error('db/migration-failed', `Migration ${r.migrationName} failed`, { migration: r.migrationName });
    }
  }
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return applied;
}

/** The migrations this code knows that the database has not applied (readiness asks). */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const applied = await (db as Kysely<{ kysely_migration: { name: string } }>).selectFrom('kysely_migration').select('name').execute();
  const names = new Set(applied.map((row) => row.name));
  return Object.keys(MIGRATIONS).filter((name) => !names.has(name));
}
