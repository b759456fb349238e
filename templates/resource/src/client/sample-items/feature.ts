/** The sample items feature: an organization's sample items page (`/orgs/<id>/sample-items`), for every member; the write role writes. */
import { List } from 'lucide';
import { registerResource } from '../resources/events.js';
import { msg } from '../i18n/words.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { SAMPLE_ITEM_SCOPES, SAMPLE_ITEMS } from './fields.js';

// the page's code (the resources' shared page) is fetched when first opened: the first load stays within the budget (docs/i18n.md)
const SampleItemsPage = lazyPage(() =>
  import('../resources/pages.js').then(
    ({ ResourcePage }) =>
      () =>
        ResourcePage({ config: SAMPLE_ITEMS }),
  ),
);

export const sampleItems: Feature = {
  id: 'sample-items',
  routes: [{ name: 'org-sample-items', path: '/orgs/:id/sample-items', page: SampleItemsPage, access: 'signed-in', title: msg('Sample items') }],
  nav: [
    {
      section: 'org',
      route: 'org-sample-items',
      label: msg('Sample items'),
      id: 'nav-org-sample-items',
      icon: List,
      order: 1.5,
      path: (s) => (s.currentOrg ? `/orgs/${s.currentOrg}/sample-items` : undefined),
    },
  ],
  register: (core) => registerResource(core, SAMPLE_ITEMS),
  // OAuth apps may be granted its scopes: the OAuth apps and consent pages word them
  init: () => [['oauth/scopes-declared', SAMPLE_ITEM_SCOPES]],
};
