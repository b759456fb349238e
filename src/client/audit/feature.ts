/** The audit log feature: an organization's audit log page. */
import type { Feature } from '../shell/features.js';
import { registerAudit } from './events.js';
import { AuditLogPage } from './pages.js';

export const audit: Feature = {
  id: 'audit',
  routes: [{ name: 'org-audit', path: '/orgs/:id/audit-log', page: AuditLogPage, access: 'signed-in' }],
  register: (core) => registerAudit(core),
};
