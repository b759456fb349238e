/** The audit log feature: an organization's audit log page (admins and owners). */
import { ScrollText } from 'lucide';
import { currentOrgNavPath } from '../orgs/current-org.js';
import type { Feature } from '../shell/features.js';
import { auditPath, registerAudit } from './events.js';
import { AuditLogPage } from './pages.js';

export const audit: Feature = {
  id: 'audit',
  routes: [{ name: 'org-audit', path: '/orgs/:id/audit-log', page: AuditLogPage, access: 'signed-in', title: 'Audit log' }],
  nav: [
    {
      section: 'org',
      route: 'org-audit',
      label: 'Audit log',
      id: 'nav-org-audit',
      icon: ScrollText,
      order: 3,
      path: currentOrgNavPath(auditPath, 'admins'),
    },
  ],
  register: (core) => registerAudit(core),
};
