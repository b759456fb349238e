/**
 * An organization's Single sign-on page (admins see domains; owners also the SAML connection and
 * SCIM tokens); the log-in page's "Sign in with SSO" is sign-in-events.ts's. A SCIM token is kept
 * in the state only until the page is left or the account logs out.
 */
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import type { FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { failed, withErrors } from './form-failures.js';
import { t } from '../i18n/words.js';

export interface OrgDomain {
  id: string;
  domain: string;
  verified: boolean;
  'txt-name': string;
  'txt-value': string;
}

export interface SamlConnection {
  'sp-entity-id': string;
  'acs-url': string;
  'sp-metadata-url': string;
  'idp-entity-id': string;
  'idp-sso-url': string;
  'certificate-expires-at': string;
  'default-role': 'member' | 'admin';
  enforced: boolean;
}

export interface ScimToken {
  id: string;
  name: string;
  'default-role': 'member' | 'admin';
  'created-at': string;
  'last-used-at': string | null;
}

export interface SsoState {
  ssoPage?: {
    orgId: string;
    status: 'loading' | 'ready' | 'missing';
    org?: Organization;
    domains?: OrgDomain[];
    /** null: none set up */
    connection?: SamlConnection | null;
    tokens?: ScimToken[];
    /** a token just made: shown once */
    newToken?: { name: string; token: string };
    resets: number;
  };
}

declare module '../shell/state.js' {
  interface AppState extends SsoState {}
}

export const DOMAIN_FORM = 'add-domain';
export const SAML_FORM = 'saml-connection-form';
export const TOKEN_FORM = 'create-scim-token';

export const ssoPath = (orgId: string) => `/orgs/${orgId}/sso`;
export function ssoOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/sso\/?$/i.exec(path)?.[1];
}

type Page = NonNullable<SsoState['ssoPage']>;

const pageOf = (state: AppState, orgId: unknown): Page | undefined => (state.ssoPage?.orgId === orgId ? state.ssoPage : undefined);
const withPage = (state: AppState, page: Page, extra: Partial<AppState> = {}): AppState => ({ ...state, ...extra, ssoPage: page });

export function registerSso(core: EventCore<AppState>): void {
  core
    .regEvent('sso/open', ({ state }, [, orgId]) => ({
      db: withErrors(
        withErrors(withErrors({ ...state, ssoPage: { orgId: orgId as string, status: 'loading', resets: 0 } }, DOMAIN_FORM, undefined), SAML_FORM, undefined),
        TOKEN_FORM,
        undefined,
      ),
      'http/auth-api': { url: `orgs/${orgId}`, onSuccess: ['sso/org-loaded', orgId], onFailure: ['sso/missing', orgId] },
    }))
    .regEvent('sso/org-loaded', ({ state }, [, orgId, org]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const o = org as Organization;
      const loads =
        o.role === 'member'
          ? []
          : [
              ['sso/load-domains', orgId],
              ...(o.role === 'owner'
                ? [
                    ['sso/load-connection', orgId],
                    ['sso/load-tokens', orgId],
                  ]
                : []),
            ];
      return { db: withPage(state, { ...page, status: 'ready', org: o }), dispatchN: loads };
    })
    .regEvent('sso/missing', ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return {
        db: withPage(state, { ...page, status: 'missing' }),
        dispatch: (failure as FailureBody).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('sso/load-domains', (_ctx, [, orgId]) => ({
      'http/auth-api': { url: `orgs/${orgId}/domains`, successPath: ['domains'], onSuccess: ['sso/loaded', orgId, 'domains'], onFailure: ['request/failed'] },
    }))
    .regEvent('sso/load-connection', (_ctx, [, orgId]) => ({
      // `{connection: null}` before one is set up: a normal answer, not a 404 (no console error on every visit)
      'http/auth-api': {
        url: `orgs/${orgId}/sso/saml`,
        successPath: ['connection'],
        onSuccess: ['sso/loaded', orgId, 'connection'],
        onFailure: ['request/failed'],
      },
    }))
    .regEvent('sso/load-tokens', (_ctx, [, orgId]) => ({
      'http/auth-api': { url: `orgs/${orgId}/scim-tokens`, successPath: ['tokens'], onSuccess: ['sso/loaded', orgId, 'tokens'], onFailure: ['request/failed'] },
    }))
    .regEvent('sso/loaded', ({ state }, [, orgId, key, value]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return { db: withPage(state, { ...page, [key as string]: value }, { busy: false }) };
    })
    .regEvent('sso/add-domain', ({ state }, [, form]) => {
      const page = state.ssoPage;
      if (!page) return;
      return {
        db: { ...withErrors(state, DOMAIN_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/domains`,
          method: 'post',
          body: { domain: ((form as { domain?: string }).domain ?? '').trim() },
          onSuccessN: [
            ['sso/done', page.orgId, t('Domain added: create its TXT record, then verify')],
            ['sso/load-domains', page.orgId],
          ],
          onFailure: ['sso/failed', DOMAIN_FORM, 'domain'],
        },
      };
    })
    .regEvent('sso/verify-domain', ({ state }, [, domainId]) => {
      const page = state.ssoPage;
      if (!page) return;
      return {
        db: { ...withErrors(state, DOMAIN_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/domains/${domainId}/verify`,
          method: 'post',
          onSuccessN: [
            ['sso/done', page.orgId, t('Domain verified')],
            ['sso/load-domains', page.orgId],
          ],
          onFailure: ['sso/failed', DOMAIN_FORM, 'domain'],
        },
      };
    })
    .regEvent('sso/delete-domain', ({ state }, [, domainId]) => {
      const page = state.ssoPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/domains/${domainId}`,
          method: 'delete',
          onSuccessN: [
            ['sso/done', page.orgId, t('Domain removed')],
            ['sso/load-domains', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('sso/save-connection', ({ state }, [, form]) => {
      const page = state.ssoPage;
      if (!page) return;
      const f = form as { metadata?: string; role?: string; enforced?: boolean };
      return {
        db: { ...withErrors(state, SAML_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/sso/saml`,
          method: 'put',
          body: { 'metadata-xml': f.metadata ?? '', 'default-role': f.role === 'admin' ? 'admin' : 'member', enforced: f.enforced === true },
          onSuccessN: [
            ['sso/loaded', page.orgId, 'connection'],
            ['sso/done', page.orgId, t('SAML connection saved')],
          ],
          onFailure: ['sso/failed', SAML_FORM, 'metadata-xml'],
        },
      };
    })
    .regEvent('sso/delete-connection', ({ state }) => {
      const page = state.ssoPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/sso/saml`,
          method: 'delete',
          onSuccessN: [
            ['sso/loaded', page.orgId, 'connection', null],
            ['sso/done', page.orgId, t('SAML connection removed')],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('sso/create-token', ({ state }, [, form]) => {
      const page = state.ssoPage;
      if (!page) return;
      const f = form as { name?: string; role?: string };
      return {
        db: { ...withErrors(state, TOKEN_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/scim-tokens`,
          method: 'post',
          body: { name: (f.name ?? '').trim(), 'default-role': f.role === 'admin' ? 'admin' : 'member' },
          onSuccess: ['sso/token-created', page.orgId],
          onFailure: ['sso/failed', TOKEN_FORM, 'name'],
        },
      };
    })
    .regEvent('sso/token-created', ({ state }, [, orgId, created]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      const c = created as ScimToken & { token: string };
      return {
        db: withPage(state, { ...page, newToken: { name: c.name, token: c.token }, resets: page.resets + 1 }, { busy: false }),
        dispatchN: [
          ['toast/info', { message: t('Token made: copy it into the directory now, it is not shown again') }],
          ['sso/load-tokens', orgId],
        ],
      };
    })
    .regEvent('sso/revoke-token', ({ state }, [, tokenId]) => {
      const page = state.ssoPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/scim-tokens/${tokenId}`,
          method: 'delete',
          onSuccessN: [
            ['sso/done', page.orgId, t('Token revoked')],
            ['sso/load-tokens', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('sso/done', ({ state }, [, orgId, message]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      return { db: withPage(state, { ...page, resets: page.resets + 1 }, { busy: false }), dispatch: ['toast/info', { message }] };
    })
    .regEvent('sso/failed', ({ state }, [, form, field, failure]) => failed(state, form as string, failure, field as string));
}
