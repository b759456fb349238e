/** The organization roles, lowest first: the overview and the members page rank them as the server does. */
import type { OrgRole } from './events.js';

export const ROLES: OrgRole[] = ['member', 'admin', 'owner'];
export const rank = (role: OrgRole) => ROLES.indexOf(role);

/** A role select's options: the roles as the pages show them. */
export const roleOptions = (roles: readonly OrgRole[]) => roles.map((r) => ({ value: r, label: r }));

/** The roles a sign-on or a directory may give the members it adds: never owner. */
export const GRANTED_ROLES: OrgRole[] = ROLES.filter((r) => r !== 'owner');
