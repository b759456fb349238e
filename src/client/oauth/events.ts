/**
 * The OAuth pages' state and events (docs/oauth.md): an organization's OAuth apps (admins), the
 * consent page of a sign-in request (`/authorize/<uid>`), and the account's connected apps. A new
 * app's secret (or a rotated one) stays in the state only until the admin closes it: the server
 * never shows it again.
 */
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import type { BrowserIo } from '../shell/features.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

export interface OAuthApp {
  id: string;
  'client-id': string;
  name: string;
  'redirect-uris': string[];
  confidential: boolean;
  scopes: string[];
  'created-at': string;
}

export interface Interaction {
  uid: string;
  client: {
    'client-id': string;
    name: string;
    organization: { id: string; name: string } | null;
    /** the host of the client's metadata document (its `client_id` URL); null otherwise */
    host: string | null;
    /** false for a client the product has not reviewed (a metadata document's, or one that registered itself) */
    reviewed: boolean;
  };
  scopes: string[];
  'consent-required': boolean;
  /** the app asked a fresh sign-in: Allow asks for the password again (or a new sign-in) */
  'login-required'?: boolean;
}

export interface ConnectedApp {
  id: string;
  'client-id': string;
  name: string;
  organization: { id: string; name: string } | null;
  scopes: string[];
  'created-at': string;
  'last-used-at': string | null;
  /** false for a client the product has not reviewed: its name is its own word */
  reviewed: boolean;
  /** the host of the client's metadata document, when it has one */
  host: string | null;
  /** the grant reaches the MCP server: an AI assistant acting for the person */
  assistant: boolean;
}

export interface OAuthState {
  oauthAppsPage?: {
    orgId: string;
    status: 'loading' | 'ready' | 'missing';
    org?: Organization;
    apps?: OAuthApp[];
    /** a secret just made or rotated, with its app's name: shown once */
    secret?: { name: string; 'client-id': string; value: string };
    formResets: number;
  };
  authorizePage?: { uid: string; status: 'loading' | 'ready' | 'missing' | 'leaving'; interaction?: Interaction };
  connectedApps?: ConnectedApp[];
  /** API scopes other features declare (a generated resource's), with the consent screen's words */
  declaredScopes?: Readonly<Record<string, string>>;
}

declare module '../shell/state.js' {
  interface AppState extends OAuthState {}
}

export const oauthAppsPath = (orgId: string) => `/orgs/${orgId}/oauth-apps`;
export const oauthAppsOrgIdOf = (path: string) => /^\/orgs\/([0-9a-f-]{36})\/oauth-apps\/?$/i.exec(path)?.[1];
export const authorizeUidOf = (path: string) => /^\/authorize\/([A-Za-z0-9_-]{1,100})\/?$/.exec(path)?.[1];

type AppsPage = NonNullable<OAuthState['oauthAppsPage']>;
const appsPageOf = (state: AppState, orgId: unknown): AppsPage | undefined => (state.oauthAppsPage?.orgId === orgId ? state.oauthAppsPage : undefined);

function registerAppsPage(core: EventCore<AppState>): void {
  core
    .regEvent('oauth-apps/open', ({ state }, [, orgId]) => ({
      db: { ...state, oauthAppsPage: { orgId: orgId as string, status: 'loading', formResets: 0 } },
      'http/auth-api': { url: `orgs/${orgId}`, onSuccess: ['oauth-apps/org-loaded', orgId], onFailure: ['oauth-apps/missing', orgId] },
    }))
    .regEvent('oauth-apps/org-loaded', ({ state }, [, orgId, org]) => {
      const page = appsPageOf(state, orgId);
      if (!page) return;
      const o = org as Organization;
      return { db: { ...state, oauthAppsPage: { ...page, status: 'ready', org: o } }, dispatch: o.role === 'member' ? undefined : ['oauth-apps/load', orgId] };
    })
    .regEvent('oauth-apps/missing', ({ state }, [, orgId, failure]) => {
      const page = appsPageOf(state, orgId);
      if (!page) return;
      return {
        db: { ...state, oauthAppsPage: { ...page, status: 'missing' } },
        dispatch: (failure as { type?: string }).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('oauth-apps/load', (_ctx, [, orgId]) => ({
      'http/auth-api': { url: `orgs/${orgId}/oauth-apps`, successPath: ['oauth-apps'], onSuccess: ['oauth-apps/loaded', orgId], onFailure: ['request/failed'] },
    }))
    .regEvent('oauth-apps/loaded', ({ state }, [, orgId, apps]) => {
      const page = appsPageOf(state, orgId);
      if (!page) return;
      return { db: { ...state, busy: false, oauthAppsPage: { ...page, apps: apps as OAuthApp[] } } };
    })
    .regEvent('oauth-apps/create', ({ state }, [, form, data]) => {
      const page = state.oauthAppsPage;
      if (!page) return;
      const f = form as { name?: string; 'redirect-uris'?: string; confidential?: string };
      const scopes = (data as FormData | undefined)?.getAll('scopes').map(String) ?? [];
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/oauth-apps`,
          method: 'post',
          body: {
            name: (f.name ?? '').trim(),
            'redirect-uris': (f['redirect-uris'] ?? '')
              .split('\n')
              .map((u) => u.trim())
              .filter(Boolean),
            confidential: f.confidential === 'on',
            scopes: scopes.length > 0 ? scopes : ['openid'],
          },
          onSuccess: ['oauth-apps/created', page.orgId],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('oauth-apps/created', ({ state }, [, orgId, created]) => {
      const page = appsPageOf(state, orgId);
      if (!page) return;
      const app = created as OAuthApp & { 'client-secret'?: string };
      const secret = app['client-secret'] ? { name: app.name, 'client-id': app['client-id'], value: app['client-secret'] } : undefined;
      return {
        db: { ...state, busy: false, oauthAppsPage: { ...page, secret, formResets: page.formResets + 1 } },
        dispatchN: [
          ['toast/info', { message: t('{name} is registered: its client id is {clientId}', { name: app.name, clientId: app['client-id'] }) }],
          ['oauth-apps/load', orgId],
        ],
      };
    })
    .regEvent('oauth-apps/rotate', ({ state }, [, appId]) => {
      const page = state.oauthAppsPage;
      const app = page?.apps?.find((a) => a.id === appId);
      if (!page || !app) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/oauth-apps/${appId}/rotate-secret`,
          method: 'post',
          body: {},
          onSuccess: ['oauth-apps/rotated', page.orgId, app.name, app['client-id']],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('oauth-apps/rotated', ({ state }, [, orgId, name, clientId, body]) => {
      const page = appsPageOf(state, orgId);
      if (!page) return;
      const secret = { name: name as string, 'client-id': clientId as string, value: (body as { 'client-secret': string })['client-secret'] };
      return { db: { ...state, busy: false, oauthAppsPage: { ...page, secret } } };
    })
    .regEvent('oauth-apps/close-secret', ({ state }) =>
      state.oauthAppsPage ? { db: { ...state, oauthAppsPage: { ...state.oauthAppsPage, secret: undefined } } } : undefined,
    )
    .regEvent('oauth-apps/copy', ({ state }) => {
      const secret = state.oauthAppsPage?.secret;
      if (!secret) return;
      return { 'clipboard/copy': { text: secret.value, onSuccess: ['toast/info', { message: t('Secret copied') }], onFailure: ['api-keys/copy-failed'] } };
    })
    .regEvent('oauth-apps/delete', ({ state }, [, appId]) => {
      const page = state.oauthAppsPage;
      if (!page) return;
      const name = page.apps?.find((a) => a.id === appId)?.name ?? t('The app');
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/oauth-apps/${appId}`,
          method: 'delete',
          onSuccessN: [
            ['toast/info', { message: t('{name} was deleted', { name }) }],
            ['oauth-apps/load', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}

function registerConsent(core: EventCore<AppState>): void {
  core
    .regEvent('authorize/open', ({ state }, [, uid]) => ({
      db: { ...state, authorizePage: { uid: uid as string, status: 'loading' } },
      'http/auth-api': { url: `oauth/interactions/${uid}`, onSuccess: ['authorize/loaded', uid], onFailure: ['authorize/missing', uid] },
    }))
    .regEvent('authorize/loaded', ({ state }, [, uid, interaction]) => {
      if (state.authorizePage?.uid !== uid) return;
      const i = interaction as Interaction;
      return {
        db: { ...state, authorizePage: { uid: uid as string, status: 'ready', interaction: i } },
        // an earlier Allow covers every scope asked: no screen, the page allows at once
        dispatch: i['consent-required'] ? undefined : ['authorize/answer', true],
      };
    })
    .regEvent('authorize/missing', ({ state }, [, uid]) =>
      state.authorizePage?.uid === uid ? { db: { ...state, authorizePage: { uid: uid as string, status: 'missing' } } } : undefined,
    )
    .regEvent('authorize/answer', ({ state }, [, allow]) => {
      const page = state.authorizePage;
      if (!page) return;
      return {
        db: { ...state, busy: true, authorizePage: { ...page, status: 'leaving' } },
        'http/auth-api': {
          url: `oauth/interactions/${page.uid}/consent`,
          method: 'post',
          body: { allow: Boolean(allow) },
          onSuccess: ['authorize/leave'],
          onFailureN: [['request/failed'], ['authorize/missing', page.uid]],
        },
      };
    })
    .regEvent('authorize/leave', (_ctx, [, body]) => ({ 'location/assign': (body as { 'redirect-to': string })['redirect-to'] }));
}

function registerConnectedApps(core: EventCore<AppState>): void {
  core
    .regEvent('connected-apps/load', () => ({
      'http/auth-api': { url: 'account/connected-apps', successPath: ['connected-apps'], onSuccess: ['connected-apps/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('connected-apps/loaded', ({ state }, [, apps]) => ({ db: { ...state, busy: false, connectedApps: apps as ConnectedApp[] } }))
    .regEvent('connected-apps/revoke', ({ state }, [, id]) => {
      const name = state.connectedApps?.find((a) => a.id === id)?.name ?? t('The app');
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `account/connected-apps/${id}`,
          method: 'delete',
          onSuccessN: [['toast/info', { message: t('{name} is disconnected', { name }) }], ['connected-apps/load']],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}

export function registerOAuth(core: EventCore<AppState>, io: BrowserIo): void {
  // leaving the app for the provider (the same effect as billing's and oidc's)
  core.regFx('location/assign', (url: string) => io.assign(url));
  // a feature's own API scopes (its `init` sends them): offered to apps, worded on the consent page
  core.regEvent('oauth/scopes-declared', ({ state }, [, scopes]) => ({
    db: { ...state, declaredScopes: { ...state.declaredScopes, ...(scopes as Record<string, string>) } },
  }));
  registerAppsPage(core);
  registerConsent(core);
  registerConnectedApps(core);
}
