/**
 * The notifications API as route data (docs/notifications.md): the account's own notifications
 * (an OAuth token with `notifications:read` may read them), its preferences, and an
 * organization's defaults (admins).
 */
import { ErrorBody, requestCoercion } from '../http/errors.js';
import { ref, requireUser, route, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import type { Preferences } from './preferences.js';
import { MarkRead, NotificationList, NotificationPath, NotificationPreferences, NotificationQuery, PreferenceChanges } from './schemas.js';
import type { NotificationService } from './service.js';
import { STREAM_SCOPE } from './stream.js';
import { Type } from 'typebox';

const error = ref(ErrorBody);
const OrgId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export function notificationRoutes(notifications: NotificationService, preferences: Preferences, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Notifications'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'GET',
        path: '/notifications',
        summary: "The account's notifications",
        description:
          'Newest first, a page at a time (`cursor` from `next-cursor`), with the unread count. Live: `GET /api/notifications/stream` ' +
          '(`text/event-stream`, docs/notifications.md).',
        scopes: [STREAM_SCOPE],
        schemas: { querystring: NotificationQuery, response: { 200: ref(NotificationList) } },
        handler: ({ user, parameters }) => notifications.list(requireUser(user).id, parameters.query),
      }),
      route({
        method: 'POST',
        path: '/notifications/read',
        summary: 'Mark notifications read',
        schemas: { body: ref(MarkRead), response: { 204: null, 400: error } },
        async handler({ user, parameters }) {
          const body = parameters.body;
          if (!body.all && !body.ids) throw requestCoercion('body', [{ path: '', message: 'name `ids`, or `all: true`' }]);
          await notifications.markRead(requireUser(user).id, body);
          return undefined;
        },
      }),
      route({
        method: 'DELETE',
        path: '/notifications/:id',
        summary: 'Delete a notification',
        schemas: { params: NotificationPath, response: { 204: null, 404: error } },
        async handler({ user, parameters }) {
          await notifications.remove(requireUser(user).id, parameters.path.id);
          return undefined;
        },
      }),
      route({
        method: 'GET',
        path: '/account/notification-preferences',
        summary: "The account's notification preferences",
        description: 'Per category: shown in the app, and emailed `immediately`, `daily` (one digest a day) or `off`. A critical category is always both.',
        schemas: { response: { 200: ref(NotificationPreferences) } },
        handler: async ({ user }) => ({ categories: await preferences.ofAccount(requireUser(user).id) }),
      }),
      route({
        method: 'PUT',
        path: '/account/notification-preferences',
        summary: 'Choose notification channels',
        description:
          'Any of the categories; `null` for a channel goes back to the default (the organization’s, then shown and emailed immediately). A critical category muted: 400 naming it.',
        schemas: { body: ref(PreferenceChanges), response: { 200: ref(NotificationPreferences), 400: error } },
        handler: async ({ user, parameters }) => ({ categories: await preferences.setForAccount(requireUser(user).id, parameters.body.categories) }),
      }),
      route({
        method: 'GET',
        path: '/orgs/:id/notification-preferences',
        summary: "The organization's notification defaults",
        description: "What its members get for the organization's notifications until they choose themselves.",
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(NotificationPreferences) } },
        handler: async ({ parameters }) => ({ categories: await preferences.ofOrganization(parameters.path.id) }),
      }),
      route({
        method: 'PUT',
        path: '/orgs/:id/notification-preferences',
        summary: "Set the organization's notification defaults",
        orgRole: 'admin',
        schemas: { params: OrgId, body: ref(PreferenceChanges), response: { 200: ref(NotificationPreferences), 400: error } },
        handler: async ({ parameters }) => ({ categories: await preferences.setForOrganization(parameters.path.id, parameters.body.categories) }),
      }),
    ],
  };
}
