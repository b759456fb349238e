/** The usage feature: an organization's seats and metered usage against its plan's limits. */
import { Gauge } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { registerUsage, usagePath } from './events.js';
import { msg } from '../i18n/words.js';

// a report, fetched when first opened
const UsagePage = lazyPage(() => import('./pages.js').then((m) => m.UsagePage));

export const usage: Feature = {
  id: 'usage',
  routes: [{ name: 'org-usage', path: '/orgs/:id/usage', page: UsagePage, access: 'signed-in', title: msg('Usage') }],
  nav: [
    {
      section: 'org',
      route: 'org-usage',
      label: msg('Usage'),
      id: 'nav-org-usage',
      icon: Gauge,
      order: 5,
      path: currentOrgNavPath(usagePath),
    },
  ],
  register: (core) => registerUsage(core),
};
