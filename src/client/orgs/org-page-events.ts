/**
 * An organization's page in the client (the overview and the members page, the path's
 * organization): the organization, its members and, for admins, its pending invitations; inviting,
 * revoking, changing a member's role, removing a member or leaving, deleting the organization.
 * docs/client.md.
 */
import type { EventCore } from '../core.js';
import type { AppState, ImageLinks } from '../shell/state.js';
import { CURRENT_ORG_KEY, type Failure, type Organization, type OrgRole, resetForm } from './events.js';
import { t } from '../i18n/words.js';

export interface Member {
  'account-id': string;
  email: string;
  name: string | null;
  role: OrgRole;
  'joined-at': string;
  /** the member's picture; absent from servers without files */
  avatar?: ImageLinks | null;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: OrgRole;
  'expires-at': string;
}

/** This part of the app state: absent until an organization's page opens. */
export interface OrgPageState {
  /** the organization page's data, for the id in the path */
  orgPage?: { id: string; status: 'loading' | 'ready' | 'missing'; org?: Organization; members?: Member[]; invitations?: PendingInvitation[] };
}

declare module '../shell/state.js' {
  interface AppState extends OrgPageState {}
}

/** The organization page's events; its storage effect (`storage/set`) is registerOrgs's. */
export function registerOrgPage(core: EventCore<AppState>): void {
  core
    .regEvent('org/open', ({ state }, [, id]) => ({
      db: { ...state, orgPage: { id: id as string, status: 'loading' } },
      'http/auth-api': { url: `orgs/${id}`, onSuccess: ['org/loaded', id], onFailure: ['org/missing', id] },
    }))
    .regEvent('org/loaded', ({ state }, [, id, org]) => {
      if (state.orgPage?.id !== id) return;
      const o = org as Organization;
      return {
        db: { ...state, orgPage: { ...state.orgPage, status: 'ready', org: o }, currentOrg: o.id },
        'storage/set': { key: CURRENT_ORG_KEY, value: o.id },
        dispatchN: [['org/load-members', id], ...(o.role === 'member' ? [] : [['org/load-invitations', id]])],
      };
    })
    .regEvent('org/missing', ({ state }, [, id, failure]) => {
      if (state.orgPage?.id !== id) return;
      const f = failure as Failure;
      return {
        db: { ...state, orgPage: { id: id as string, status: 'missing' } },
        // a non-member is told 404, like for an organization that does not exist: the page says so
        dispatch: f.type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('org/load-members', (_ctx, [, id]) => ({
      'http/auth-api': { url: `orgs/${id}/members`, successPath: ['members'], onSuccess: ['org/members-loaded', id], onFailure: ['request/failed'] },
    }))
    .regEvent('org/members-loaded', ({ state }, [, id, members]) => {
      if (state.orgPage?.id !== id) return;
      return { db: { ...state, busy: false, orgPage: { ...state.orgPage, members: members as Member[] } } };
    })
    .regEvent('org/load-invitations', (_ctx, [, id]) => ({
      'http/auth-api': {
        url: `orgs/${id}/invitations`,
        successPath: ['invitations'],
        onSuccess: ['org/invitations-loaded', id],
        onFailure: ['request/failed'],
      },
    }))
    .regEvent('org/invitations-loaded', ({ state }, [, id, invitations]) => {
      if (state.orgPage?.id !== id) return;
      return { db: { ...state, orgPage: { ...state.orgPage, invitations: invitations as PendingInvitation[] } } };
    })
    .regEvent('org/invite', ({ state }, [, form]) => {
      const id = state.orgPage?.id;
      if (!id) return;
      const f = form as { email?: string; role?: string };
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${id}/invitations`,
          method: 'post',
          body: { email: (f.email ?? '').trim(), role: f.role ?? 'member' },
          onSuccess: ['org/invited', id],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('org/invited', ({ state }, [, id, invitation]) => ({
      db: resetForm(state, 'invite'),
      dispatchN: [
        ['toast/info', { message: t('Invitation sent to {email}', { email: (invitation as PendingInvitation).email }) }],
        ['org/load-invitations', id],
      ],
    }))
    .regEvent('org/revoke', ({ state }, [, invitationId]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `orgs/${state.orgPage?.id}/invitations/${invitationId}`,
        method: 'delete',
        onSuccessN: [['app/idle'], ['org/load-invitations', state.orgPage?.id]],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('org/change-role', ({ state }, [, accountId, role]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `orgs/${state.orgPage?.id}/members/${accountId}`,
        method: 'patch',
        body: { role },
        onSuccessN: [
          ['toast/info', { message: t('Role changed to {role}', { role: String(role) }) }],
          ['org/load-members', state.orgPage?.id],
        ],
        // the select shows the role the server has again
        onFailureN: [['request/failed'], ['org/load-members', state.orgPage?.id]],
      },
    }))
    .regEvent('org/remove', ({ state }, [, accountId]) => {
      const leaving = accountId === state.account?.id;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${state.orgPage?.id}/members/${accountId}`,
          method: 'delete',
          onSuccess: leaving ? ['org/left'] : ['org/load-members', state.orgPage?.id],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('org/left', ({ state }) => ({
      db: { ...state, busy: false, orgs: state.orgs?.filter((o) => o.id !== state.orgPage?.id), currentOrg: undefined, orgPage: undefined },
      dispatchN: [['toast/info', { message: t('You left the organization') }], ['orgs/load'], ['router/navigate', { route: 'orgs' }]],
    }))
    // the logo: uploaded by the overview's upload control (shell/uploads.ts), removed here; either way the
    // organization is asked for again (new signed links), and the switcher's list too
    .regEvent('org/remove-logo', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `orgs/${state.orgPage?.id}/logo`,
        method: 'delete',
        onSuccessN: [['app/idle'], ['org/logo-changed', state.orgPage?.id], ['toast/info', { message: t('Logo removed') }]],
        onFailureN: [['request/failed'], ['app/idle'], ['org/logo-changed', state.orgPage?.id]],
      },
    }))
    .regEvent('org/logo-changed', (_ctx, [, id]) => ({
      'http/auth-api': { url: `orgs/${id}`, onSuccess: ['org/reloaded', id], onFailure: ['request/failed'] },
      dispatch: ['orgs/load'],
    }))
    .regEvent('org/reloaded', ({ state }, [, id, org]) => {
      if (state.orgPage?.id !== id) return;
      return { db: { ...state, orgPage: { ...state.orgPage, org: org as Organization } } };
    })
    .regEvent('org/delete', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': { url: `orgs/${state.orgPage?.id}`, method: 'delete', onSuccess: ['org/left'], onFailureN: [['request/failed'], ['app/idle']] },
    }));
}
