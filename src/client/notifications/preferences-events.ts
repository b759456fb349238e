/**
 * The preferences grid's state and events: the account's own choices per category
 * (`/settings/notifications`) and an organization's defaults for its members
 * (`/orgs/<id>/notifications`, admins). A save sends only what changed, so a category left alone
 * keeps following its default (the organization's, for its notifications); a critical category is
 * fixed and never sent. A refusal (400) shows the server's words above the grid.
 */
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import type { FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

export type EmailChoice = 'immediately' | 'daily' | 'off';

export interface CategoryPreference {
  category: string;
  name: string;
  /** always shown and emailed immediately */
  critical: boolean;
  'in-app': boolean;
  email: EmailChoice;
}

export interface PreferenceChange {
  category: string;
  'in-app'?: boolean | null;
  email?: EmailChoice | null;
}

export interface NotificationPreferencesState {
  notificationPreferences?: {
    /** `account`, or the organization's id */
    owner: string;
    status: 'loading' | 'ready' | 'missing';
    /** an organization's page: the organization (its name, the caller's role) */
    org?: Organization;
    categories?: CategoryPreference[];
    /** the outcome of the last save */
    notice?: { tone: 'success' | 'info' | 'error'; text: string };
    /** answers loaded: the grid is keyed by it, so its controls show the server's values */
    loads: number;
  };
}

declare module '../shell/state.js' {
  interface AppState extends NotificationPreferencesState {}
}

export const ACCOUNT_OWNER = 'account';
export const orgNotificationsPath = (orgId: string) => `/orgs/${orgId}/notifications`;
export const orgNotificationsIdOf = (path: string) => /^\/orgs\/([0-9a-f-]{36})\/notifications\/?$/i.exec(path)?.[1];

/** The grid's field names: `in-app:<category>` (a checkbox, `on`) and `email:<category>`. */
export const inAppField = (category: string) => `in-app:${category}`;
export const emailField = (category: string) => `email:${category}`;

const urlOf = (owner: string) => (owner === ACCOUNT_OWNER ? 'account/notification-preferences' : `orgs/${owner}/notification-preferences`);

/** What the form changed against the loaded grid; critical categories (fixed, their controls disabled) are left out. */
export function changesOf(categories: readonly CategoryPreference[], fields: Record<string, string>): PreferenceChange[] {
  return categories.flatMap((c) => {
    if (c.critical) return [];
    const change: PreferenceChange = { category: c.category };
    const inApp = fields[inAppField(c.category)] === 'on';
    const email = fields[emailField(c.category)] as EmailChoice | undefined;
    if (inApp !== c['in-app']) change['in-app'] = inApp;
    if (email && email !== c.email) change.email = email;
    return Object.keys(change).length > 1 ? [change] : [];
  });
}

/** A refusal in words: the message and what it names (`security is critical: …`). */
export function refusalText(failure: FailureBody): string {
  const details = failure.errors?.map((e) => e.message).filter(Boolean) ?? [];
  return [failure.message ?? t('The preferences could not be saved'), ...details].join(': ');
}

type Prefs = NonNullable<NotificationPreferencesState['notificationPreferences']>;
const prefsOf = (state: AppState, owner: unknown): Prefs | undefined =>
  state.notificationPreferences?.owner === owner ? state.notificationPreferences : undefined;
const withPrefs = (state: AppState, prefs: Prefs): AppState => ({ ...state, notificationPreferences: prefs });

export function registerNotificationPreferences(core: EventCore<AppState>): void {
  core
    // `owner`: `account`, or an organization's id (whose page asks for the organization first: admins only)
    .regEvent('notification-preferences/open', ({ state }, [, owner]) => {
      const o = owner as string;
      const db = withPrefs(state, { owner: o, status: 'loading', loads: 0 });
      if (o === ACCOUNT_OWNER) return { db, dispatch: ['notification-preferences/load', o] };
      return {
        db,
        'http/auth-api': { url: `orgs/${o}`, onSuccess: ['notification-preferences/org-loaded', o], onFailure: ['notification-preferences/missing', o] },
      };
    })
    .regEvent('notification-preferences/org-loaded', ({ state }, [, owner, org]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs) return;
      const o = org as Organization;
      return {
        db: withPrefs(state, { ...prefs, org: o, status: 'ready' }),
        dispatch: o.role === 'member' ? undefined : ['notification-preferences/load', owner],
      };
    })
    .regEvent('notification-preferences/missing', ({ state }, [, owner, failure]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs) return;
      return {
        db: withPrefs(state, { ...prefs, status: 'missing' }),
        dispatch: (failure as { type?: string }).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('notification-preferences/load', (_ctx, [, owner]) => ({
      'http/auth-api': { url: urlOf(owner as string), onSuccess: ['notification-preferences/loaded', owner], onFailure: ['request/failed'] },
    }))
    .regEvent('notification-preferences/loaded', ({ state }, [, owner, body]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs) return;
      const { categories } = body as { categories: CategoryPreference[] };
      return { db: withPrefs(state, { ...prefs, status: 'ready', categories, loads: prefs.loads + 1 }) };
    })
    .regEvent('notification-preferences/save', ({ state }, [, owner, fields]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs?.categories) return;
      const changes = changesOf(prefs.categories, fields as Record<string, string>);
      if (changes.length === 0) return { db: withPrefs(state, { ...prefs, notice: { tone: 'info', text: t('Nothing changed.') } }) };
      return { db: withPrefs({ ...state, busy: true }, { ...prefs, notice: undefined }), dispatch: ['notification-preferences/put', owner, changes, 'Saved.'] };
    })
    // every category that can change back to its default (the organization's, then shown and emailed immediately)
    .regEvent('notification-preferences/reset', ({ state }, [, owner]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs?.categories) return;
      const changes = prefs.categories.filter((c) => !c.critical).map((c) => ({ category: c.category, 'in-app': null, email: null }));
      const text = owner === ACCOUNT_OWNER ? t('Back to the defaults.') : t('Back to the product’s defaults.');
      return { db: withPrefs({ ...state, busy: true }, { ...prefs, notice: undefined }), dispatch: ['notification-preferences/put', owner, changes, text] };
    })
    .regEvent('notification-preferences/put', (_ctx, [, owner, changes, text]) => ({
      'http/auth-api': {
        url: urlOf(owner as string),
        method: 'put',
        body: { categories: changes },
        onSuccessN: [['notification-preferences/saved', owner, text], ['app/idle']],
        onFailureN: [['notification-preferences/refused', owner], ['app/idle']],
      },
    }))
    .regEvent('notification-preferences/saved', ({ state }, [, owner, text, body]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs) return;
      const { categories } = body as { categories: CategoryPreference[] };
      return { db: withPrefs(state, { ...prefs, categories, loads: prefs.loads + 1, notice: { tone: 'success', text: text as string } }) };
    })
    .regEvent('notification-preferences/refused', ({ state }, [, owner, failure]) => {
      const prefs = prefsOf(state, owner);
      if (!prefs) return;
      return { db: withPrefs(state, { ...prefs, notice: { tone: 'error', text: refusalText(failure as FailureBody) } }) };
    });
}
