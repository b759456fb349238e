/** The organizations feature: the list, an organization's page, the invitation link, the switcher in the header. */
import type { Feature } from '../shell/features.js';
import { registerOrgs } from './events.js';
import { AcceptInvitationPage, OrgPage, OrgSwitcher, OrgsPage } from './pages.js';

export const orgs: Feature = {
  id: 'orgs',
  routes: [
    { name: 'orgs', path: '/orgs', page: OrgsPage, access: 'signed-in' },
    { name: 'org', path: '/orgs/:id', page: OrgPage, access: 'signed-in' },
    { name: 'accept-invitation', path: '/invitations/accept', page: AcceptInvitationPage, access: 'public' },
  ],
  register: (core, io) => registerOrgs(core, io),
  init: () => [['orgs/init']],
  enter: 'orgs/page-enter',
  header: OrgSwitcher,
};
