/** The OAuth feature: an organization's OAuth apps (admins), the consent page of a sign-in request, the account's connected apps. */
import { AppWindow, PlugZap } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { AuthorizePage, ConnectedAppsPage } from './consent-pages.js';
import { oauthAppsPath, registerOAuth } from './events.js';
import { msg } from '../i18n/words.js';

// a developer's settings page, fetched when first opened
const OAuthAppsPage = lazyPage(() => import('./apps-page.js').then((m) => m.OAuthAppsPage));

export const oauth: Feature = {
  id: 'oauth',
  routes: [
    { name: 'org-oauth-apps', path: '/orgs/:id/oauth-apps', page: OAuthAppsPage, access: 'signed-in', title: msg('OAuth apps') },
    // public: the page signs the visitor in itself, and stays (docs/oauth.md)
    { name: 'authorize', path: '/authorize/:uid', page: AuthorizePage, access: 'public', title: msg('Sign-in request'), logInInPlace: true },
    { name: 'connected-apps', path: '/settings/connected-apps', page: ConnectedAppsPage, access: 'signed-in', title: msg('Connected apps') },
  ],
  nav: [
    {
      section: 'org',
      route: 'org-oauth-apps',
      label: msg('OAuth apps'),
      id: 'nav-org-oauth-apps',
      icon: AppWindow,
      order: 2.7,
      path: currentOrgNavPath(oauthAppsPath, 'admins'),
    },
    { section: 'settings', route: 'connected-apps', label: msg('Connected apps'), id: 'nav-connected-apps', icon: PlugZap, order: 2.5 },
  ],
  register: (core, io) => registerOAuth(core, io),
  // a secret shown on the page leaves memory with the session
  forgetOnLogOut: ['oauthAppsPage', 'connectedApps', 'authorizePage'],
};
