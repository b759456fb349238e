/**
 * The notifications feature (docs/client.md, "Notifications"): the bell beside the account menu,
 * live while the app is open; the Notifications page; the account's preferences grid and an
 * organization's defaults for its admins.
 */
import { Bell, BellRing, Settings2 } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { NotificationBell } from './bell.js';
import { registerNotifications } from './events.js';
import { NotificationsPage } from './page.js';
import { registerNotificationPreferences, orgNotificationsPath } from './preferences-events.js';
import { registerNotificationStream } from './stream.js';
import { msg } from '../i18n/words.js';

// settings pages, fetched when first opened
const NotificationPreferencesPage = lazyPage(() => import('./preferences-page.js').then((m) => m.NotificationPreferencesPage));
const OrgNotificationDefaultsPage = lazyPage(() => import('./preferences-page.js').then((m) => m.OrgNotificationDefaultsPage));

export const notifications: Feature = {
  id: 'notifications',
  routes: [
    { name: 'notifications', path: '/notifications', page: NotificationsPage, access: 'signed-in', title: msg('Notifications') },
    {
      name: 'notification-preferences',
      path: '/settings/notifications',
      page: NotificationPreferencesPage,
      access: 'signed-in',
      title: msg('Notification preferences'),
    },
    { name: 'org-notifications', path: '/orgs/:id/notifications', page: OrgNotificationDefaultsPage, access: 'signed-in', title: msg('Notification defaults') },
  ],
  nav: [
    { section: 'main', route: 'notifications', label: msg('Notifications'), id: 'nav-notifications', icon: Bell, order: 0.5 },
    {
      section: 'settings',
      route: 'notification-preferences',
      label: msg('Notification preferences'),
      id: 'nav-notification-preferences',
      icon: BellRing,
      order: 2.1,
    },
    {
      section: 'org',
      route: 'org-notifications',
      label: msg('Notification defaults'),
      id: 'nav-org-notifications',
      icon: Settings2,
      order: 3.5,
      path: currentOrgNavPath(orgNotificationsPath, 'admins'),
    },
  ],
  register(core) {
    registerNotifications(core);
    registerNotificationStream(core);
    registerNotificationPreferences(core);
  },
  enter: 'notifications/page-enter',
  headerTools: NotificationBell,
  // another account signing in on this tab starts afresh
  forgetOnLogOut: ['bell', 'notificationsPage', 'notificationPreferences'],
};
