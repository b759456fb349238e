/**
 * The audit log feature: an organization's audit log page with its filters and export, and its
 * streams page (admins and owners).
 */
import { ScrollText } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { lazyPage } from '../shell/lazy-page.js';
import { auditPath, registerAudit } from './events.js';
import { registerAuditExport } from './export.js';
import { registerAuditStreams } from './streams-events.js';
import { msg } from '../i18n/words.js';

// an admin's pages, fetched when first opened (docs/i18n.md, "The client's budget")
const AuditLogPage = lazyPage(() => import('./pages.js').then((m) => m.AuditLogPage));
const AuditStreamsPage = lazyPage(() => import('./streams-page.js').then((m) => m.AuditStreamsPage));
export const audit: Feature = {
  id: 'audit',
  routes: [
    { name: 'org-audit', path: '/orgs/:id/audit-log', page: AuditLogPage, access: 'signed-in', title: msg('Audit log') },
    { name: 'org-audit-streams', path: '/orgs/:id/audit-log/streams', page: AuditStreamsPage, access: 'signed-in', title: msg('Audit log streams') },
  ],
  nav: [
    {
      section: 'org',
      route: 'org-audit',
      label: msg('Audit log'),
      id: 'nav-org-audit',
      icon: ScrollText,
      order: 3,
      path: currentOrgNavPath(auditPath, 'admins'),
    },
  ],
  register(core, io) {
    registerAudit(core);
    registerAuditExport(core, io);
    registerAuditStreams(core);
  },
  // a stream's secret shown on the page leaves memory with the session, and so does what the log showed
  forgetOnLogOut: ['auditPage', 'auditExport', 'auditStreams'],
};
