/**
 * Who gets what, where (docs/notifications.md, "Preferences"): per category, an in-app channel
 * (shown or not) and an email channel (`immediately`, `daily`, `off`). An account's own choice
 * wins; else, for an organization's notification, the organization's default its admins set; else
 * shown and emailed immediately. A critical category is always shown and emailed immediately.
 */
import { phrase } from '../i18n/messages.js';
import type { DB } from '../db/database.js';
import type { EmailChoice } from '../db/schema.js';
import { requestCoercion } from '../http/errors.js';
import type { NotificationCategory } from './kinds.js';
import type { CategoryPreference, PreferenceChange } from './schemas.js';

export interface Channels {
  inApp: boolean;
  email: EmailChoice;
}

export const DEFAULT_CHANNELS: Channels = { inApp: true, email: 'immediately' };

export class Preferences {
  constructor(
    private readonly db: DB,
    private readonly categories: ReadonlyMap<string, NotificationCategory>,
  ) {}

  /** The channels of each account for a category, in `db` (the notification's transaction). */
  async channelsOf(db: DB, accountIds: readonly string[], category: string, organizationId: string | null): Promise<Map<string, Channels>> {
    const result = new Map<string, Channels>();
    if (accountIds.length === 0) return result;
    if (this.categories.get(category)?.critical) {
      for (const id of accountIds) result.set(id, DEFAULT_CHANNELS);
      return result;
    }
    const [own, orgDefault] = await Promise.all([
      db
        .selectFrom('notification_preference')
        .select(['account_id', 'in_app', 'email'])
        .where('account_id', 'in', [...accountIds])
        .where('category', '=', category)
        .execute(),
      organizationId
        ? db
            .selectFrom('organization_notification_default')
            .select(['in_app', 'email'])
            .where('organization_id', '=', organizationId)
            .where('category', '=', category)
            .executeTakeFirst()
        : Promise.resolve(undefined),
    ]);
    const byAccount = new Map(own.map((row) => [row.account_id, row]));
    for (const id of accountIds) {
      const mine = byAccount.get(id);
      result.set(id, {
        inApp: mine?.in_app ?? orgDefault?.in_app ?? DEFAULT_CHANNELS.inApp,
        email: mine?.email ?? orgDefault?.email ?? DEFAULT_CHANNELS.email,
      });
    }
    return result;
  }

  /** Refuses a choice for an unknown category, and anything but the default for a critical one (400 naming it). */
  private check(changes: readonly PreferenceChange[]): void {
    const errors = changes.flatMap((change, i) => {
      const category = this.categories.get(change.category);
      if (!category) return [{ path: `/categories/${i}/category`, message: phrase('there is no category {category}', { category: change.category }) }];
      const muted = change['in-app'] === false || (change.email !== undefined && change.email !== null && change.email !== 'immediately');
      return category.critical && muted
        ? [{ path: `/categories/${i}`, message: phrase('{category} is critical: it is always shown and emailed immediately', { category: change.category }) }]
        : [];
    });
    if (errors.length > 0) throw requestCoercion('body', errors);
  }

  private grid(
    rows: ReadonlyArray<{ category: string; in_app: boolean | null; email: EmailChoice | null }>,
    fallback?: Map<string, { in_app: boolean | null; email: EmailChoice | null }>,
  ): CategoryPreference[] {
    const byCategory = new Map(rows.map((row) => [row.category, row]));
    return [...this.categories.values()].map((c) => {
      const row = byCategory.get(c.id);
      const base = fallback?.get(c.id);
      return {
        category: c.id,
        name: c.name,
        critical: c.critical,
        'in-app': c.critical ? true : (row?.in_app ?? base?.in_app ?? DEFAULT_CHANNELS.inApp),
        email: c.critical ? 'immediately' : (row?.email ?? base?.email ?? DEFAULT_CHANNELS.email),
      };
    });
  }

  async ofAccount(accountId: string): Promise<CategoryPreference[]> {
    const rows = await this.db.selectFrom('notification_preference').select(['category', 'in_app', 'email']).where('account_id', '=', accountId).execute();
    return this.grid(rows);
  }

  async setForAccount(accountId: string, changes: readonly PreferenceChange[]): Promise<CategoryPreference[]> {
    this.check(changes);
    await this.db.transaction().execute(async (trx) => {
      for (const change of changes) await upsert(trx, 'notification_preference', { account_id: accountId }, change);
    });
    return this.ofAccount(accountId);
  }

  async ofOrganization(organizationId: string): Promise<CategoryPreference[]> {
    const rows = await this.db
      .selectFrom('organization_notification_default')
      .select(['category', 'in_app', 'email'])
      .where('organization_id', '=', organizationId)
      .execute();
    return this.grid(rows);
  }

  async setForOrganization(organizationId: string, changes: readonly PreferenceChange[]): Promise<CategoryPreference[]> {
    this.check(changes);
    await this.db.transaction().execute(async (trx) => {
      for (const change of changes) await upsert(trx, 'organization_notification_default', { organization_id: organizationId }, change);
    });
    return this.ofOrganization(organizationId);
  }

  /** The one-click unsubscribe: the email of the categories (a digest's are comma-joined) off for the account; a critical one stays. */
  async emailOff(accountId: string, categories: string): Promise<string[]> {
    const muted = categories.split(',').filter((c) => this.categories.has(c) && !this.categories.get(c)!.critical);
    await this.db.transaction().execute(async (trx) => {
      for (const category of muted) await upsert(trx, 'notification_preference', { account_id: accountId }, { category, email: 'off' });
    });
    return muted;
  }
}

/** Sets the channels a change names (undefined: kept; null: back to the default). */
async function upsert(
  db: DB,
  table: 'notification_preference' | 'organization_notification_default',
  owner: { account_id: string } | { organization_id: string },
  change: PreferenceChange,
): Promise<void> {
  const set: { in_app?: boolean | null; email?: EmailChoice | null } = {};
  if (change['in-app'] !== undefined) set.in_app = change['in-app'];
  if (change.email !== undefined) set.email = change.email;
  if (Object.keys(set).length === 0) return;
  const keys = 'account_id' in owner ? (['account_id', 'category'] as const) : (['organization_id', 'category'] as const);
  await (db as DB)
    .insertInto(table as 'notification_preference')
    .values({ ...(owner as { account_id: string }), category: change.category, in_app: set.in_app ?? null, email: set.email ?? null })
    .onConflict((oc) => oc.columns([...keys] as ['account_id', 'category']).doUpdateSet(set))
    .execute();
}
