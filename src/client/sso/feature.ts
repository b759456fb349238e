/** The single sign-on feature: an organization's Single sign-on page (admins and owners) and "Sign in with SSO" on the log-in page. */
import { KeyRound } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { registerSso, ssoPath } from './events.js';
import { registerSsoSignIn } from './sign-in-events.js';
import { msg } from '../i18n/words.js';

// an admin's settings page, fetched when first opened
const SsoPage = lazyPage(() => import('./pages.js').then((m) => m.SsoPage));

export const sso: Feature = {
  id: 'sso',
  routes: [{ name: 'org-sso', path: '/orgs/:id/sso', page: SsoPage, access: 'signed-in', title: msg('Single sign-on') }],
  nav: [
    {
      section: 'org',
      route: 'org-sso',
      label: msg('Single sign-on'),
      id: 'nav-org-sso',
      icon: KeyRound,
      order: 2.6,
      path: currentOrgNavPath(ssoPath, 'admins'),
    },
  ],
  register(core) {
    registerSso(core);
    registerSsoSignIn(core);
  },
  // a SCIM token shown on the page leaves memory with the session
  forgetOnLogOut: ['ssoPage'],
};
