/**
 * Organizations in the client: the list (for the switcher and the organizations page), the
 * organization chosen last (kept in localStorage; the current one: current-org.ts), and the
 * invitation landing page (an organization's page: org-page-events.ts). An invitation opened
 * without a session is remembered (localStorage, so the verification link may open in another
 * tab) and accepted once the visitor has logged in or signed up and comes to the account page.
 */
import type { AppState, ImageLinks, Route } from '../shell/state.js';
import type { EventCore } from '../core.js';
import { t } from '../i18n/words.js';

export type OrgRole = 'owner' | 'admin' | 'member';

export interface Organization {
  id: string;
  name: string;
  slug: string;
  personal: boolean;
  'created-at': string;
  role: OrgRole;
  /** the organization's logo; absent from servers without files */
  logo?: ImageLinks | null;
  subscription: {
    status: 'none' | 'trialing' | 'active' | 'past-due' | 'canceled';
    plan: string | null;
    'current-period-end': string | null;
    'cancel-at-period-end': boolean;
    'has-customer': boolean;
  };
}

export type InvitationStatus = 'needs-session' | 'accepting' | 'unverified' | 'mismatch' | 'failed';

export interface OrgsState {
  /** the caller's organizations; undefined until loaded for `orgsFor` */
  orgs?: Organization[];
  /** the account the list belongs to (a log-in as someone else reloads it) */
  orgsFor?: string;
  /** the organization chosen last (the switcher, an organization's page); a page under `/orgs/<id>` names its own (current-org.ts) */
  currentOrg?: string;
  /** the invitation landing page */
  invitationPage?: { status: InvitationStatus; message?: string };
  /** an invitation token waiting for a session */
  pendingInvitation?: string;
  /** success counts of the organization forms (a form is keyed by it, so a success clears it) */
  orgFormResets?: Partial<Record<'create-org' | 'invite', number>>;
}

declare module '../shell/state.js' {
  interface AppState extends OrgsState {}
}

export interface OrgsIo {
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
}

export const CURRENT_ORG_KEY = 'current-org';
export const PENDING_INVITATION_KEY = 'pending-invitation';

export interface Failure {
  type?: string;
  reason?: string;
  message?: string;
}

/** `/orgs/<id>` -> the id */
export function orgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/?$/i.exec(path)?.[1];
}

export const orgPath = (id: string) => `/orgs/${id}`;
export const membersPath = (id: string) => `/orgs/${id}/members`;

/** `/orgs/<id>/…` -> the id of the organization a page belongs to */
export function orgIdInPath(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})(?:\/|$)/i.exec(path)?.[1];
}

/** The state after an organization form succeeded: the form is keyed by its count, so it clears. */
export const resetForm = (state: AppState, form: 'create-org' | 'invite'): AppState => ({
  ...state,
  busy: false,
  orgFormResets: { ...state.orgFormResets, [form]: (state.orgFormResets?.[form] ?? 0) + 1 },
});

/** The invitation page's state after a failed acceptance; a token that cannot work any more is forgotten. */
export function invitationFailure(failure: Failure): { status: InvitationStatus; message: string; forget: boolean } {
  if (failure.reason === 'email-unverified') {
    return { status: 'unverified', message: t('Verify your email address first: open the link we sent you, then come back here.'), forget: false };
  }
  if (failure.reason === 'email-mismatch') {
    return { status: 'mismatch', message: failure.message ?? t('This invitation was sent to another email address.'), forget: false };
  }
  if (failure.type === 'invalid-token') {
    return { status: 'failed', message: t('This invitation is invalid, was already used, was revoked or has expired.'), forget: true };
  }
  return { status: 'failed', message: failure.message ?? t('The invitation could not be accepted.'), forget: false };
}

export function registerOrgs(core: EventCore<AppState>, io: OrgsIo): void {
  core.regFx('storage/set', ({ key, value }: { key: string; value: string | undefined }) => {
    if (value === undefined) io.storage.removeItem(key);
    else io.storage.setItem(key, value);
  });

  core
    .regEvent('orgs/init', ({ state }) => ({
      db: {
        ...state,
        currentOrg: io.storage.getItem(CURRENT_ORG_KEY) ?? undefined,
        pendingInvitation: io.storage.getItem(PENDING_INVITATION_KEY) ?? undefined,
      },
    }))
    // after `page/enter`: the switcher's list, the invitation page, and an invitation waiting for this session
    .regEvent('orgs/page-enter', ({ state }, [, route, search]) => {
      const r = route as Route;
      const signedIn = Boolean(state.token && state.account);
      const effects: Record<string, unknown> = {};
      const events: Array<[string, ...unknown[]]> = [];
      if (signedIn && state.orgsFor !== state.account?.id) events.push(['orgs/load']);
      if (r === 'accept-invitation') events.push(['invitation/open', search]);
      else if (r === 'account' && signedIn && state.pendingInvitation) {
        events.push(['router/navigate', { route: 'accept-invitation' }]);
      }
      if (events.length) effects.dispatchN = events;
      return effects;
    })
    .regEvent('orgs/load', () => ({
      'http/auth-api': { url: 'orgs', successPath: ['organizations'], onSuccess: ['orgs/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('orgs/loaded', ({ state }, [, orgs]) => {
      const list = orgs as Organization[];
      const current = list.some((o) => o.id === state.currentOrg) ? state.currentOrg : (list.find((o) => o.personal)?.id ?? list[0]?.id);
      return { db: { ...state, orgs: list, orgsFor: state.account?.id, currentOrg: current }, 'storage/set': { key: CURRENT_ORG_KEY, value: current } };
    })
    .regEvent('orgs/select', ({ state }, [, id]) => ({
      db: { ...state, currentOrg: id as string },
      'storage/set': { key: CURRENT_ORG_KEY, value: id as string },
      dispatch: ['router/navigate', { route: 'org', path: orgPath(id as string) }],
    }))
    .regEvent('orgs/create', ({ state }, [, form]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'orgs',
        method: 'post',
        body: { name: ((form as { name?: string }).name ?? '').trim() },
        onSuccess: ['orgs/created'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('orgs/created', ({ state }, [, org]) => {
      const o = org as Organization;
      return {
        db: { ...resetForm(state, 'create-org'), orgs: [...(state.orgs ?? []), o] },
        dispatchN: [
          ['toast/info', { message: t('Organization {name} created', { name: o.name }) }],
          ['orgs/select', o.id],
        ],
      };
    })

    // the invitation landing page: the token leaves the URL and waits in storage until accepted
    .regEvent('invitation/open', ({ state }, [, search]) => {
      const token = new URLSearchParams(String(search ?? '')).get('token') ?? state.pendingInvitation;
      if (!token)
        return { db: { ...state, invitationPage: { status: 'failed', message: t('This invitation link has no token. Open the link from the email again.') } } };
      const db: AppState = { ...state, pendingInvitation: token };
      const effects = { 'storage/set': { key: PENDING_INVITATION_KEY, value: token }, 'url/replace': '/invitations/accept' };
      if (!state.token) return { db: { ...db, invitationPage: { status: 'needs-session' } }, ...effects };
      return { db, ...effects, dispatch: ['invitation/accept'] };
    })
    .regEvent('invitation/accept', ({ state }) => {
      if (!state.pendingInvitation) return;
      return {
        db: { ...state, busy: true, invitationPage: { status: 'accepting' } },
        'http/auth-api': {
          url: 'invitations/accept',
          method: 'post',
          body: { token: state.pendingInvitation },
          onSuccess: ['invitation/accepted'],
          onFailure: ['invitation/failed'],
        },
      };
    })
    .regEvent('invitation/accepted', ({ state }, [, org]) => {
      const o = org as Organization;
      return {
        db: { ...state, busy: false, pendingInvitation: undefined, invitationPage: undefined, orgsFor: undefined },
        'storage/set': { key: PENDING_INVITATION_KEY, value: undefined },
        dispatchN: [['toast/info', { message: t('You joined {name}', { name: o.name }) }], ['orgs/load'], ['orgs/select', o.id]],
      };
    })
    .regEvent('invitation/failed', ({ state }, [, failure]) => {
      const outcome = invitationFailure(failure as Failure);
      return {
        db: {
          ...state,
          busy: false,
          invitationPage: { status: outcome.status, message: outcome.message },
          pendingInvitation: outcome.forget ? undefined : state.pendingInvitation,
        },
        'storage/set': outcome.forget ? { key: PENDING_INVITATION_KEY, value: undefined } : undefined,
      };
    });
}
