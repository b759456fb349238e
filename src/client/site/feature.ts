/** The site feature: the landing page at `/` and the page of an unknown address. */
import type { Feature } from '../shell/features.js';
import { LandingPage, NotFoundPage } from './pages.js';
import { msg } from '../i18n/words.js';

export const site: Feature = {
  id: 'site',
  routes: [
    { name: 'home', path: '/', page: LandingPage, access: 'public', title: msg('Home') },
    { name: 'not-found', path: '/404', page: NotFoundPage, access: 'public', title: msg('Page not found') },
  ],
};
