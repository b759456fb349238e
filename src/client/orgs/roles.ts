/** The organization roles, lowest first: the overview and the members page rank them as the server does. */
import { msg, t } from '../i18n/words.js';
import type { OrgRole } from './events.js';

export const ROLES: OrgRole[] = ['member', 'admin', 'owner'];
export const rank = (role: OrgRole) => ROLES.indexOf(role);

const ROLE_NAMES: Record<string, string> = { member: msg('member'), admin: msg('admin'), owner: msg('owner') };

/** A role as the pages show it, in the reader's language. */
export const roleName = (role: string) => t(ROLE_NAMES[role] ?? role);

/** A role select's options: the roles as the pages show them (the select translates its labels). */
export const roleOptions = (roles: readonly OrgRole[]) => roles.map((r) => ({ value: r, label: ROLE_NAMES[r] ?? r }));

/** The roles a sign-on or a directory may give the members it adds: never owner. */
export const GRANTED_ROLES: OrgRole[] = ROLES.filter((r) => r !== 'owner');
