/** The webhooks feature: an organization's outgoing webhooks page (admins and owners). */
import { Webhook } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { registerDeliveryLog } from './delivery-log-events.js';
import { registerWebhooks, webhooksPath } from './events.js';
import { lazyPage } from '../shell/lazy-page.js';
import { msg } from '../i18n/words.js';

// an admin's settings page, fetched when first opened
const WebhooksPage = lazyPage(() => import('./pages.js').then((m) => m.WebhooksPage));

export const webhooks: Feature = {
  id: 'webhooks',
  routes: [{ name: 'org-webhooks', path: '/orgs/:id/webhooks', page: WebhooksPage, access: 'signed-in', title: msg('Webhooks') }],
  nav: [
    {
      section: 'org',
      route: 'org-webhooks',
      label: msg('Webhooks'),
      id: 'nav-org-webhooks',
      icon: Webhook,
      order: 2.5,
      path: currentOrgNavPath(webhooksPath, 'admins'),
    },
  ],
  register(core) {
    registerWebhooks(core);
    registerDeliveryLog(core);
  },
  // a secret shown on the page leaves memory with the session
  forgetOnLogOut: ['webhooksPage'],
};
