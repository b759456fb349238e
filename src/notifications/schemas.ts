/** The notifications API's shapes (docs/notifications.md). */
import { Type, type Static } from 'typebox';

export const Notification = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.String(),
    category: Type.String(),
    title: Type.String(),
    body: Type.String(),
    url: Type.Union([Type.String(), Type.Null()], { description: 'where it leads in the app (a path), or null' }),
    'organization-id': Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    'created-at': Type.String({ format: 'date-time' }),
    'read-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    cursor: Type.String({ description: "its place in the account's notifications: the stream's event id" }),
  },
  { $id: 'notification', additionalProperties: false },
);
export type Notification = Static<typeof Notification>;

export const NotificationList = Type.Object(
  {
    notifications: Type.Array(Notification),
    'next-cursor': Type.Union([Type.String(), Type.Null()], { description: 'the next page: pass as `cursor`; null at the end' }),
    'unread-count': Type.Integer({ minimum: 0 }),
  },
  { $id: 'notification-list', additionalProperties: false },
);
export type NotificationList = Static<typeof NotificationList>;

export const NotificationQuery = Type.Object(
  {
    unread: Type.Optional(Type.Boolean({ description: 'only the unread ones' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,19}$', description: 'from `next-cursor`: the page after it (older)' })),
  },
  { additionalProperties: false },
);

export const MarkRead = Type.Object(
  {
    ids: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100 })),
    all: Type.Optional(Type.Literal(true)),
  },
  { $id: 'mark-notifications-read', additionalProperties: false, description: '`ids`, or `all: true`' },
);
export type MarkRead = Static<typeof MarkRead>;

const EmailChoiceSchema = Type.Union([Type.Literal('immediately'), Type.Literal('daily'), Type.Literal('off')]);

export const CategoryPreference = Type.Object(
  {
    category: Type.String(),
    name: Type.String(),
    critical: Type.Boolean({ description: 'always shown and emailed immediately' }),
    'in-app': Type.Boolean(),
    email: EmailChoiceSchema,
  },
  { additionalProperties: false },
);
export type CategoryPreference = Static<typeof CategoryPreference>;

export const NotificationPreferences = Type.Object(
  { categories: Type.Array(CategoryPreference) },
  { $id: 'notification-preferences', additionalProperties: false },
);
export type NotificationPreferences = Static<typeof NotificationPreferences>;

export const PreferenceChange = Type.Object(
  {
    category: Type.String({ minLength: 1, maxLength: 50 }),
    'in-app': Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'null: back to the default' })),
    email: Type.Optional(Type.Union([EmailChoiceSchema, Type.Null()], { description: 'null: back to the default' })),
  },
  { additionalProperties: false },
);
export type PreferenceChange = Static<typeof PreferenceChange>;

export const PreferenceChanges = Type.Object(
  { categories: Type.Array(PreferenceChange, { maxItems: 50 }) },
  { $id: 'notification-preference-changes', additionalProperties: false },
);
export type PreferenceChanges = Static<typeof PreferenceChanges>;

export const NotificationPath = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const NOTIFICATION_SCHEMAS = [Notification, NotificationList, MarkRead, NotificationPreferences, PreferenceChanges];
