/**
 * An organization's Webhooks page (admins): its endpoints, a form to add one (URL, description,
 * event picker), reveal and rotate a secret, send a test, enable or disable, delete; each
 * endpoint's delivery log (the page's `log`) has its events in delivery-log-events.ts.
 * A revealed secret stays in the state only until it is hidden, the page is left, or the account
 * logs out.
 */
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import { errorsByField, type FailureBody, withFormErrors } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  'disabled-reason': string | null;
  'created-at': string;
}

export interface WebhookAttempt {
  at: string;
  'status-code': number | null;
  'duration-ms': number;
  error: string | null;
  response: string | null;
}

export interface WebhookDelivery {
  id: string;
  'message-id': string;
  'event-type': string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: WebhookAttempt[];
  'next-attempt-at': string | null;
  'created-at': string;
}

export type DeliveryFilter = '' | 'pending' | 'succeeded' | 'failed';

export interface WebhooksState {
  webhooksPage?: {
    orgId: string;
    status: 'loading' | 'ready' | 'missing';
    org?: Organization;
    eventTypes?: string[];
    webhooks?: Webhook[];
    /** secrets shown, by endpoint id (made, revealed or rotated on this visit) */
    secrets: Record<string, string>;
    /** success count of the create form (keys it, so a success clears it) */
    formResets: number;
    /** the endpoint whose deliveries are shown */
    log?: { webhookId: string; filter: DeliveryFilter; items?: WebhookDelivery[]; nextCursor: string | null };
  };
}

declare module '../shell/state.js' {
  interface AppState extends WebhooksState {}
}

/** The create form's id: its field errors are the shell's `fieldErrors['create-webhook']`. */
export const CREATE_FORM = 'create-webhook';

/** The picker's value for every event type, those added later included. */
export const ALL_EVENTS = '*';

/** `/orgs/<id>/webhooks` -> the id */
export function webhooksOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/webhooks\/?$/i.exec(path)?.[1];
}

export const webhooksPath = (orgId: string) => `/orgs/${orgId}/webhooks`;

type Page = NonNullable<WebhooksState['webhooksPage']>;

/** The page's state when it is the one for `orgId`, else undefined (a late answer for a page left). */
export const pageOf = (state: AppState, orgId: unknown): Page | undefined => (state.webhooksPage?.orgId === orgId ? state.webhooksPage : undefined);
export const withPage = (state: AppState, page: Page, extra: Partial<AppState> = {}): AppState => ({ ...state, ...extra, webhooksPage: page });

export function registerWebhooks(core: EventCore<AppState>): void {
  core
    // every entry starts afresh: secrets shown and errors of the last visit are gone
    .regEvent('webhooks/open', ({ state }, [, orgId]) => ({
      db: withFormErrors({ ...state, webhooksPage: { orgId: orgId as string, status: 'loading', secrets: {}, formResets: 0 } }, CREATE_FORM, undefined),
      'http/auth-api': { url: `orgs/${orgId}`, onSuccess: ['webhooks/org-loaded', orgId], onFailure: ['webhooks/missing', orgId] },
    }))
    .regEvent('webhooks/org-loaded', ({ state }, [, orgId, org]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const o = org as Organization;
      return {
        db: withPage(state, { ...page, status: 'ready', org: o }),
        dispatchN:
          o.role === 'member'
            ? []
            : [
                ['webhooks/load', orgId],
                ['webhooks/load-types', orgId],
              ],
      };
    })
    .regEvent('webhooks/missing', ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return {
        db: withPage(state, { ...page, status: 'missing' }),
        dispatch: (failure as FailureBody).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('webhooks/load-types', (_ctx, [, orgId]) => ({
      'http/auth-api': {
        url: 'webhooks/event-types',
        successPath: ['event-types'],
        onSuccess: ['webhooks/types-loaded', orgId],
        onFailure: ['request/failed'],
      },
    }))
    .regEvent('webhooks/types-loaded', ({ state }, [, orgId, types]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return { db: withPage(state, { ...page, eventTypes: types as string[] }) };
    })
    .regEvent('webhooks/load', (_ctx, [, orgId]) => ({
      'http/auth-api': { url: `orgs/${orgId}/webhooks`, successPath: ['webhooks'], onSuccess: ['webhooks/loaded', orgId], onFailure: ['request/failed'] },
    }))
    .regEvent('webhooks/loaded', ({ state }, [, orgId, list]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const webhooks = list as Webhook[];
      // an endpoint deleted meanwhile takes its secret and its log along
      const secrets = Object.fromEntries(Object.entries(page.secrets).filter(([id]) => webhooks.some((w) => w.id === id)));
      const log = page.log && webhooks.some((w) => w.id === page.log!.webhookId) ? page.log : undefined;
      return { db: withPage(state, { ...page, webhooks, secrets, log }, { busy: false }) };
    })
    .regEvent('webhooks/create', ({ state }, [, form]) => {
      const page = state.webhooksPage;
      if (!page) return;
      const f = form as { url?: string; description?: string; events?: string[] };
      const events = f.events ?? [];
      if (events.length === 0) return { db: withFormErrors(state, CREATE_FORM, { events: t('Pick at least one event type, or all of them') }) };
      return {
        db: { ...withFormErrors(state, CREATE_FORM, undefined), busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks`,
          method: 'post',
          body: { url: (f.url ?? '').trim(), events, ...(f.description?.trim() ? { description: f.description.trim() } : {}) },
          onSuccess: ['webhooks/created', page.orgId],
          onFailure: ['webhooks/create-failed', page.orgId],
        },
      };
    })
    .regEvent('webhooks/create-failed', ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      const f = failure as FailureBody;
      if (f.type !== 'request-coercion' || !f.errors?.length) return { db: { ...state, busy: false }, dispatch: ['request/failed', failure] };
      const fields = errorsByField(f.errors);
      return { db: { ...withFormErrors(state, CREATE_FORM, fields), busy: false } };
    })
    .regEvent('webhooks/created', ({ state }, [, orgId, created]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      const c = created as Webhook & { secret: string };
      return {
        db: withPage(state, { ...page, secrets: { ...page.secrets, [c.id]: c.secret }, formResets: page.formResets + 1 }),
        dispatchN: [
          ['toast/info', { message: t('Endpoint added: copy its secret into the receiver') }],
          ['webhooks/load', orgId],
        ],
      };
    })
    .regEvent('webhooks/reveal', ({ state }, [, webhookId]) => {
      const page = state.webhooksPage;
      if (!page) return;
      return {
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${webhookId}/secret`,
          successPath: ['secret'],
          onSuccess: ['webhooks/secret', page.orgId, webhookId],
          onFailure: ['request/failed'],
        },
      };
    })
    .regEvent('webhooks/secret', ({ state }, [, orgId, webhookId, secret]) => {
      const page = pageOf(state, orgId);
      if (!page) return { db: { ...state, busy: false } };
      return { db: withPage(state, { ...page, secrets: { ...page.secrets, [webhookId as string]: secret as string } }, { busy: false }) };
    })
    .regEvent('webhooks/hide', ({ state }, [, webhookId]) => {
      const page = state.webhooksPage;
      if (!page) return;
      const { [webhookId as string]: _hidden, ...secrets } = page.secrets;
      return { db: withPage(state, { ...page, secrets }) };
    })
    // the view asks for confirmation first
    .regEvent('webhooks/rotate', ({ state }, [, webhookId]) => {
      const page = state.webhooksPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${webhookId}/rotate-secret`,
          method: 'post',
          successPath: ['secret'],
          onSuccessN: [
            ['webhooks/secret', page.orgId, webhookId],
            ['toast/info', { message: t('New secret made; the previous one signs too for 24 hours') }],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('webhooks/set-enabled', ({ state }, [, webhookId, enabled]) => {
      const page = state.webhooksPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${webhookId}`,
          method: 'patch',
          body: { enabled: Boolean(enabled) },
          onSuccessN: [
            ['toast/info', { message: enabled ? t('Endpoint enabled') : t('Endpoint disabled') }],
            ['webhooks/load', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    // the view asks for confirmation first
    .regEvent('webhooks/delete', ({ state }, [, webhookId]) => {
      const page = state.webhooksPage;
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${webhookId}`,
          method: 'delete',
          onSuccessN: [
            ['toast/info', { message: t('Endpoint deleted') }],
            ['webhooks/load', page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('webhooks/test', ({ state }, [, webhookId]) => {
      const page = state.webhooksPage;
      if (!page) return;
      const filter = page.log && page.log.webhookId === webhookId ? page.log.filter : '';
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/webhooks/${webhookId}/test`,
          method: 'post',
          onSuccessN: [['app/idle'], ['toast/info', { message: t('Test event sent') }], ['webhooks/show-log', webhookId, filter]],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}
