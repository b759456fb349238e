/**
 * An organization's API keys page (admins): the live keys, a form to make one, and revocation.
 * A new key's secret is in the state only until the admin closes it (or leaves the page): the
 * server never shows it again, and nothing else keeps it.
 */
import type { AppState } from '../shell/state.js';
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import { t } from '../i18n/words.js';

export interface ApiKey {
  id: string;
  name: string;
  role: 'admin' | 'member';
  prefix: string;
  'created-at': string;
  'last-used-at': string | null;
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}

export interface ApiKeysState {
  apiKeysPage?: {
    orgId: string;
    status: 'loading' | 'ready' | 'missing';
    org?: Organization;
    keys?: ApiKey[];
    /** the key just made, with its secret: shown once */
    created?: CreatedApiKey;
    /** success count of the create form (keys it, so a success clears it) */
    formResets: number;
  };
}

declare module '../shell/state.js' {
  interface AppState extends ApiKeysState {}
}

export interface ApiKeysIo {
  /** writes to the clipboard (navigator.clipboard) */
  copy(text: string): Promise<void>;
}

/** `/orgs/<id>/api-keys` -> the id */
export function apiKeysOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/api-keys\/?$/i.exec(path)?.[1];
}

export const apiKeysPath = (orgId: string) => `/orgs/${orgId}/api-keys`;

type Page = NonNullable<ApiKeysState['apiKeysPage']>;

/** The page's state when it is the one for `orgId`, else undefined (a late answer for a page left). */
const pageOf = (state: AppState, orgId: unknown): Page | undefined => (state.apiKeysPage?.orgId === orgId ? state.apiKeysPage : undefined);

export function registerApiKeys(core: EventCore<AppState>, io: ApiKeysIo): void {
  core.regFx('clipboard/copy', ({ text, onSuccess, onFailure }: { text: string; onSuccess: [string, ...unknown[]]; onFailure: [string, ...unknown[]] }) => {
    io.copy(text).then(
      () => core.dispatch(onSuccess),
      () => core.dispatch(onFailure),
    );
  });

  core
    // every entry starts afresh: a secret shown before is gone
    .regEvent('api-keys/open', ({ state }, [, orgId]) => ({
      db: { ...state, apiKeysPage: { orgId: orgId as string, status: 'loading', formResets: 0 } },
      'http/auth-api': { url: `orgs/${orgId}`, onSuccess: ['api-keys/org-loaded', orgId], onFailure: ['api-keys/missing', orgId] },
    }))
    .regEvent('api-keys/org-loaded', ({ state }, [, orgId, org]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const o = org as Organization;
      return {
        db: { ...state, apiKeysPage: { ...page, status: 'ready', org: o } },
        dispatch: o.role === 'member' ? undefined : ['api-keys/load', orgId],
      };
    })
    .regEvent('api-keys/missing', ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return {
        db: { ...state, apiKeysPage: { ...page, status: 'missing' } },
        dispatch: (failure as { type?: string }).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('api-keys/load', (_ctx, [, orgId]) => ({
      'http/auth-api': { url: `orgs/${orgId}/api-keys`, successPath: ['api-keys'], onSuccess: ['api-keys/loaded', orgId], onFailure: ['request/failed'] },
    }))
    .regEvent('api-keys/loaded', ({ state }, [, orgId, keys]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const list = keys as ApiKey[];
      // a new key revoked while still shown: its secret is worth nothing, and goes
      const created = page.created && list.some((k) => k.id === page.created!.id) ? page.created : undefined;
      return { db: { ...state, busy: false, apiKeysPage: { ...page, keys: list, created } } };
    })
    .regEvent('api-keys/create', ({ state }, [, form]) => {
      const page = state.apiKeysPage;
      if (!page) return;
      const f = form as { name?: string; role?: string };
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/api-keys`,
          method: 'post',
          body: { name: (f.name ?? '').trim(), role: f.role ?? 'member' },
          onSuccess: ['api-keys/created', page.orgId],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('api-keys/created', ({ state }, [, orgId, created]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return {
        db: { ...state, busy: false, apiKeysPage: { ...page, created: created as CreatedApiKey, formResets: page.formResets + 1 } },
        dispatch: ['api-keys/load', orgId],
      };
    })
    .regEvent('api-keys/copy', ({ state }) => {
      const created = state.apiKeysPage?.created;
      if (!created) return;
      return { 'clipboard/copy': { text: created.key, onSuccess: ['toast/info', { message: t('Key copied') }], onFailure: ['api-keys/copy-failed'] } };
    })
    .regEvent('api-keys/copy-failed', () => ({
      dispatch: ['toast/error', { message: t('Copying failed: select the key and copy it yourself') }],
    }))
    .regEvent('api-keys/close-created', ({ state }) => {
      const page = state.apiKeysPage;
      if (!page?.created) return;
      return { db: { ...state, apiKeysPage: { ...page, created: undefined } } };
    })
    // the view asks for confirmation first
    .regEvent('api-keys/revoke', ({ state }, [, keyId]) => {
      const page = state.apiKeysPage;
      if (!page) return;
      const name = page.keys?.find((k) => k.id === keyId)?.name ?? t('The key');
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/api-keys/${keyId}`,
          method: 'delete',
          onSuccessN: [
            ['toast/info', { message: t('{name} was revoked', { name }) }],
            ['api-keys/load', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}
