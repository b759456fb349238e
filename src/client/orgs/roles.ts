/** The organization roles, lowest first: the overview and the members page rank them as the server does. */
import type { OrgRole } from './events.js';

export const ROLES: OrgRole[] = ['member', 'admin', 'owner'];
export const rank = (role: OrgRole) => ROLES.indexOf(role);
