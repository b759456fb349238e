/**
 * The page of a resource made by `npm run new:resource` (docs/resources.md), as events: the
 * organization's items a page at a time, the create and edit forms (the server's field errors
 * beside their fields), and delete. One registration per resource, its events named by its
 * plural (`projects/open`, ...), its state under `resourcePages[<plural>]`.
 */
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';
import { errorsByField, type FailureBody, withFormErrors } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import type { FieldSpecs, FieldValue } from '../../shared/resource-fields.js';
import { bodyOf } from './form-values.js';
import { registerUploads, stillSending, type UploadPage } from './uploads.js';
import { t } from '../i18n/words.js';

export type OrgRole = 'owner' | 'admin' | 'member';

/** A resource as its client feature describes it. */
export interface ResourceConfig {
  /** singular, kebab-case (`time-entry`) */
  name: string;
  /** plural, kebab-case (`time-entries`): the API's path, the events' prefix */
  plural: string;
  /** `Time entry`, `Time entries` */
  title: { one: string; many: string };
  fields: FieldSpecs;
  /**
   * what the pages call each field (by its name) and each enum value (`<field>.<value>`), as
   * message ids (`msg('Starts at')`) the feature's catalogs translate; absent: the name, humanized
   */
  labels?: Readonly<Record<string, string>>;
  /** the role that creates, changes and deletes */
  writeRole: OrgRole;
}

export type ResourceItem = { id: string; 'created-at': string; 'updated-at': string } & Record<string, FieldValue>;

export interface ResourcePageState extends UploadPage {
  orgId: string;
  status: 'loading' | 'ready' | 'missing';
  org?: Organization;
  items?: ResourceItem[];
  nextCursor: string | null;
  /** the form shown: a new item's, or an item's being edited (its file fields' uploads: `uploads`) */
  editing?: { id: string | null };
}

declare module '../shell/state.js' {
  interface AppState {
    resourcePages?: Record<string, ResourcePageState>;
  }
}

const RANK: Record<OrgRole, number> = { member: 0, admin: 1, owner: 2 };
/** Whether `role` may write a resource whose write role is `required`. */
export const mayWrite = (role: OrgRole | undefined, required: OrgRole) => role !== undefined && RANK[role] >= RANK[required];

/** The form's id (its field errors are the shell's `fieldErrors[<id>]`). */
export const formIdOf = (config: ResourceConfig) => `${config.name}-form`;

/** `/orgs/<id>/<plural>` -> the id */
export function resourceOrgIdOf(config: ResourceConfig, path: string): string | undefined {
  return new RegExp(`^/orgs/([0-9a-f-]{36})/${config.plural}/?$`, 'i').exec(path)?.[1];
}

export function registerResource(core: EventCore<AppState>, config: ResourceConfig): void {
  const { plural } = config;
  const form = formIdOf(config);
  const pageOf = (state: AppState, orgId: unknown) => (state.resourcePages?.[plural]?.orgId === orgId ? state.resourcePages?.[plural] : undefined);
  const withPage = (state: AppState, page: ResourcePageState, extra: Partial<AppState> = {}): AppState => ({
    ...state,
    ...extra,
    resourcePages: { ...state.resourcePages, [plural]: page },
  });
  const withoutErrors = (state: AppState): AppState => withFormErrors(state, form, undefined);
  registerUploads(core, { plural, form, page: (state) => state.resourcePages?.[plural], withPage: (state, page) => withPage(state, page) });

  core
    .regEvent(`${plural}/open`, ({ state }, [, orgId]) => ({
      db: withoutErrors(withPage(state, { orgId: orgId as string, status: 'loading', nextCursor: null })),
      'http/auth-api': { url: `orgs/${orgId}`, onSuccess: [`${plural}/org-loaded`, orgId], onFailure: [`${plural}/missing`, orgId] },
    }))
    .regEvent(`${plural}/org-loaded`, ({ state }, [, orgId, org]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return { db: withPage(state, { ...page, status: 'ready', org: org as Organization }), dispatch: [`${plural}/load`, orgId] };
    })
    .regEvent(`${plural}/missing`, ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return {
        db: withPage(state, { ...page, status: 'missing' }),
        dispatch: (failure as FailureBody).type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent(`${plural}/load`, (_ctx, [, orgId, cursor]) => ({
      'http/auth-api': {
        url: `orgs/${orgId}/${plural}?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor as string)}` : ''}`,
        onSuccess: [`${plural}/loaded`, orgId, Boolean(cursor)],
        onFailure: ['request/failed'],
      },
    }))
    .regEvent(`${plural}/loaded`, ({ state }, [, orgId, more, body]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      const answer = body as Record<string, unknown>;
      const items = answer[plural] as ResourceItem[];
      return {
        db: withPage(
          state,
          { ...page, items: more ? [...(page.items ?? []), ...items] : items, nextCursor: answer['next-cursor'] as string | null },
          { busy: false },
        ),
      };
    })
    .regEvent(`${plural}/edit`, ({ state }, [, id]) => {
      const page = state.resourcePages?.[plural];
      if (!page) return;
      return { db: withoutErrors(withPage(state, { ...page, editing: id === undefined ? undefined : { id: id as string | null }, uploads: undefined })) };
    })
    .regEvent(`${plural}/save`, ({ state }, [, fields]) => {
      const page = state.resourcePages?.[plural];
      if (!page?.editing) return;
      const id = page.editing.id;
      const sending = stillSending(page.uploads);
      if (sending) return { db: { ...state, fieldErrors: { ...state.fieldErrors, [form]: { [sending]: 'is still being uploaded: save once it is done' } } } };
      // an edit sends what changed from the item as its form showed it, so a field left alone keeps its value
      const body = bodyOf(config.fields, fields as Record<string, string>, id !== null, id ? page.items?.find((i) => i.id === id) : undefined);
      if (id && Object.keys(body).length === 0) return { db: withoutErrors(withPage(state, { ...page, editing: undefined, uploads: undefined })) };
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/${plural}${id ? `/${id}` : ''}`,
          method: id ? 'patch' : 'post',
          body,
          onSuccessN: [
            ['toast/info', { message: id ? t('{one} saved', { one: t(config.title.one) }) : t('{one} created', { one: t(config.title.one) }) }],
            [`${plural}/saved`, page.orgId],
          ],
          onFailure: [`${plural}/save-failed`, page.orgId],
        },
      };
    })
    .regEvent(`${plural}/saved`, ({ state }, [, orgId]) => {
      const page = pageOf(state, orgId);
      if (!page) return;
      return { db: withoutErrors(withPage(state, { ...page, editing: undefined, uploads: undefined })), dispatch: [`${plural}/load`, orgId] };
    })
    .regEvent(`${plural}/save-failed`, ({ state }, [, orgId, failure]) => {
      const page = pageOf(state, orgId);
      const f = failure as FailureBody;
      if (!page || f.type !== 'request-coercion' || !f.errors?.length) return { db: { ...state, busy: false }, dispatch: ['request/failed', failure] };
      const fields = errorsByField(f.errors);
      return { db: { ...state, busy: false, fieldErrors: { ...state.fieldErrors, [form]: fields } } };
    })
    // the view asks for confirmation first
    .regEvent(`${plural}/delete`, ({ state }, [, id]) => {
      const page = state.resourcePages?.[plural];
      if (!page) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${page.orgId}/${plural}/${id}`,
          method: 'delete',
          onSuccessN: [
            ['toast/info', { message: t('{one} deleted', { one: t(config.title.one) }) }],
            [`${plural}/load`, page.orgId],
          ],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    });
}
