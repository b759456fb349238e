/** The API keys feature: an organization's keys page (admins and owners). */
import { KeyRound } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { apiKeysPath, registerApiKeys } from './events.js';
import { msg } from '../i18n/words.js';

// an admin's settings page, fetched when first opened
const ApiKeysPage = lazyPage(() => import('./pages.js').then((m) => m.ApiKeysPage));

export const apiKeys: Feature = {
  id: 'api-keys',
  routes: [{ name: 'org-api-keys', path: '/orgs/:id/api-keys', page: ApiKeysPage, access: 'signed-in', title: msg('API keys') }],
  nav: [
    {
      section: 'org',
      route: 'org-api-keys',
      label: msg('API keys'),
      id: 'nav-org-api-keys',
      icon: KeyRound,
      order: 2,
      path: currentOrgNavPath(apiKeysPath, 'admins'),
    },
  ],
  register: (core, io) => registerApiKeys(core, io),
};
