/** The webhooks feature: an organization's outgoing webhooks page (admins and owners). */
import { Webhook } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { registerDeliveryLog } from './delivery-log-events.js';
import { registerWebhooks, webhooksPath } from './events.js';
import { WebhooksPage } from './pages.js';

export const webhooks: Feature = {
  id: 'webhooks',
  routes: [{ name: 'org-webhooks', path: '/orgs/:id/webhooks', page: WebhooksPage, access: 'signed-in', title: 'Webhooks' }],
  nav: [
    {
      section: 'org',
      route: 'org-webhooks',
      label: 'Webhooks',
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
