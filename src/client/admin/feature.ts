/**
 * The admin feature: the operator's console (platform admins only: the side navigation's
 * "Platform" section appears for them) and the impersonation banner on every page.
 */
import { Building2, ChartColumn, ScrollText, Users } from 'lucide';
import type { Feature } from '../shell/features.js';
import { ImpersonationBanner } from './banner.js';
import { isPlatformAdmin, registerAdmin } from './events.js';
import { lazyPage } from '../shell/lazy-page.js';
import { msg } from '../i18n/words.js';

// the console's pages are fetched when first opened: only operators open them
const AdminStatsPage = lazyPage(() => import('./pages.js').then((m) => m.AdminStatsPage));
const AdminAccountsPage = lazyPage(() => import('./pages.js').then((m) => m.AdminAccountsPage));
const AdminAccountPage = lazyPage(() => import('./account-page.js').then((m) => m.AdminAccountPage));
const AdminOrgsPage = lazyPage(() => import('./pages.js').then((m) => m.AdminOrgsPage));
const AdminAuditPage = lazyPage(() => import('./pages.js').then((m) => m.AdminAuditPage));

const onlyAdmins = (path: string) => (s: Parameters<typeof isPlatformAdmin>[0]) => (isPlatformAdmin(s) ? path : undefined);

export const admin: Feature = {
  id: 'admin',
  routes: [
    { name: 'admin', path: '/admin', page: AdminStatsPage, access: 'signed-in', title: msg('Platform') },
    { name: 'admin-accounts', path: '/admin/accounts', page: AdminAccountsPage, access: 'signed-in', title: msg('Accounts') },
    { name: 'admin-account', path: '/admin/accounts/:id', page: AdminAccountPage, access: 'signed-in', title: msg('Account') },
    { name: 'admin-orgs', path: '/admin/orgs', page: AdminOrgsPage, access: 'signed-in', title: msg('Organizations') },
    { name: 'admin-audit', path: '/admin/audit-log', page: AdminAuditPage, access: 'signed-in', title: msg('Admin audit log') },
  ],
  nav: [
    { section: 'admin', route: 'admin', label: msg('Overview'), id: 'nav-admin', icon: ChartColumn, order: 1, path: onlyAdmins('/admin') },
    { section: 'admin', route: 'admin-accounts', label: msg('Accounts'), id: 'nav-admin-accounts', icon: Users, order: 2, path: onlyAdmins('/admin/accounts') },
    { section: 'admin', route: 'admin-orgs', label: msg('Organizations'), id: 'nav-admin-orgs', icon: Building2, order: 3, path: onlyAdmins('/admin/orgs') },
    {
      section: 'admin',
      route: 'admin-audit',
      label: msg('Admin audit log'),
      id: 'nav-admin-audit',
      icon: ScrollText,
      order: 4,
      path: onlyAdmins('/admin/audit-log'),
    },
  ],
  banner: ImpersonationBanner,
  register: (core) => registerAdmin(core),
  forgetOnLogOut: ['adminAccounts', 'adminOrgs', 'adminAudit', 'adminAccount', 'adminStats'],
};
