/** The organizations feature: the list, an organization's overview and members, the invitation link, the switcher in the header. */
import { Building2, House, Users } from 'lucide';
import type { Feature } from '../shell/features.js';
import { currentOrgNavPath } from './current-org.js';
import { membersPath, orgPath, registerOrgs } from './events.js';
import { OrgMembersPage } from './members-page.js';
import { registerOrgPage } from './org-page-events.js';
import { OrgPage } from './overview-page.js';
import { AcceptInvitationPage, OrgSwitcher, OrgsPage } from './pages.js';
import { msg } from '../i18n/words.js';

export const orgs: Feature = {
  id: 'orgs',
  routes: [
    { name: 'orgs', path: '/orgs', page: OrgsPage, access: 'signed-in', title: msg('Organizations') },
    { name: 'org', path: '/orgs/:id', page: OrgPage, access: 'signed-in', title: msg('Organization') },
    { name: 'org-members', path: '/orgs/:id/members', page: OrgMembersPage, access: 'signed-in', title: msg('Members') },
    { name: 'accept-invitation', path: '/invitations/accept', page: AcceptInvitationPage, access: 'public', title: msg('Invitation') },
  ],
  nav: [
    { section: 'main', route: 'orgs', label: msg('Organizations'), id: 'nav-orgs', icon: Building2, order: 1 },
    { section: 'org', route: 'org', label: msg('Overview'), id: 'nav-org', icon: House, order: 0, path: currentOrgNavPath(orgPath) },
    {
      section: 'org',
      route: 'org-members',
      label: msg('Members'),
      id: 'nav-org-members',
      icon: Users,
      order: 1,
      path: currentOrgNavPath(membersPath),
    },
  ],
  register(core, io) {
    registerOrgs(core, io);
    registerOrgPage(core);
  },
  init: () => [['orgs/init']],
  enter: 'orgs/page-enter',
  header: OrgSwitcher,
};
