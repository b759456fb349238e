/**
 * The current organization: the one of the page's path (`/orgs/<id>/…`) when the caller is a
 * member of it, else the one chosen last (the switcher, kept in localStorage as `current-org`).
 * The switcher and the side navigation's organization links read it with the location's path, so
 * an organization's page opened by its URL (a bookmark, an emailed link, a reload) is its own
 * organization's, with no second copy of the route in the state.
 */
import type { AppState } from '../shell/state.js';
import { orgIdInPath, type Organization, type OrgsState } from './events.js';

type CurrentOrgState = Pick<OrgsState, 'orgs' | 'currentOrg'>;

/**
 * The current organization's id at `path` (the location's): the path's organization, unless the
 * loaded list shows the caller is not a member of it (that page says so itself), else the one
 * chosen last.
 */
export function currentOrgIdOf(state: CurrentOrgState, path: string): string | undefined {
  const inPath = orgIdInPath(path);
  if (inPath && (!state.orgs || state.orgs.some((o) => o.id === inPath))) return inPath;
  return state.currentOrg;
}

/** The current organization at `path` (see {@link currentOrgIdOf}), when the list has it. */
export function currentOrgOf(state: CurrentOrgState, path: string): Organization | undefined {
  const id = currentOrgIdOf(state, path);
  return state.orgs?.find((o) => o.id === id);
}

/** true when the caller administers the current organization at `path` (admin or owner) */
export function adminOfCurrent(state: CurrentOrgState, path: string): boolean {
  const role = currentOrgOf(state, path)?.role;
  return role === 'admin' || role === 'owner';
}

/**
 * A side-navigation item's `path`: the current organization's page (`pageOf(id)`), for its admins
 * and owners only when `who` is `admins`; none without a current organization.
 */
export function currentOrgNavPath(
  pageOf: (id: string) => string,
  who: 'members' | 'admins' = 'members',
): (state: AppState, path: string) => string | undefined {
  return (state, path) => {
    const id = currentOrgIdOf(state, path);
    if (!id || (who === 'admins' && !adminOfCurrent(state, path))) return undefined;
    return pageOf(id);
  };
}
