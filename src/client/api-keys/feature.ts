/** The API keys feature: an organization's keys page. */
import type { Feature } from '../shell/features.js';
import { registerApiKeys } from './events.js';
import { ApiKeysPage } from './pages.js';

export const apiKeys: Feature = {
  id: 'api-keys',
  routes: [{ name: 'org-api-keys', path: '/orgs/:id/api-keys', page: ApiKeysPage, access: 'signed-in' }],
  register: (core, io) => registerApiKeys(core, io),
};
