/**
 * What notifications there are (docs/notifications.md, "Kinds"): modules declare categories and
 * kinds under these keys, as they declare webhook event types, and the notifications module reads
 * them when it starts. A category is what a person chooses channels for; a critical one (security)
 * is always shown and emailed at once.
 */
import { msg } from '../i18n/messages.js';

export const NOTIFICATION_CATEGORIES_KEY = 'notifications.categories';
export const NOTIFICATION_KINDS_KEY = 'notifications.kinds';

export interface NotificationCategory {
  id: string;
  /** what the preferences grid calls it: an English message id (the unsubscribe page says it in the reader's language) */
  name: string;
  /** always in-app and emailed immediately: a choice otherwise is 400 */
  critical: boolean;
}

export interface NotificationKind {
  kind: string;
  category: string;
  /** what it tells of, for the docs and the API's description */
  description: string;
}

/** The categories the product ships; a module may declare more. */
export const BUILT_IN_CATEGORIES: NotificationCategory[] = [
  { id: 'organizations', name: msg('Organizations'), critical: false },
  { id: 'security', name: msg('Security'), critical: true },
  { id: 'billing', name: msg('Billing'), critical: false },
  { id: 'developers', name: msg('Developers'), critical: false },
];
