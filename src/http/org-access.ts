/**
 * Who may act in an organization, and as whom. Two kinds of caller reach an organization's
 * routes and query kinds: an account (an access token; its membership is looked up) and an API
 * key of that organization (its role stands for a membership; src/api-keys/). Both come out of
 * {@link authorizeOrg} as a {@link Membership}, with the same answers: 404 for a non-member or a
 * missing organization (a key of another organization is a non-member), 403 below the role.
 */
import { phrase } from '../i18n/messages.js';
import { forbidden, notFound, unauthorized } from './errors.js';

export interface AuthUser {
  id: string;
  email: string;
  /** the session (refresh family) the access token belongs to: its `sid` claim */
  sessionId: string;
  /**
   * When the sign-in that began the session happened (Unix seconds): the `auth_time` claim,
   * kept by refreshes; undefined for a token issued before it was written
   */
  authTime?: number;
  /** set in an impersonated session: the platform admin acting as the account (the token's `act` claim, RFC 8693) */
  actor?: { id: string };
  /**
   * an OAuth access token's caller (src/oauth/): the app, the scopes granted (only routes declaring
   * one of them take it) and the resource the token is for (its `aud`: `APP_URL/api` or `APP_URL/mcp`)
   */
  oauth?: { clientId: string; scopes: string[]; resource: string };
  /** the account's language when it chose one (the access token's `locale` claim): its error answers speak it */
  locale?: string;
}

/** An organization role; each includes the ones below it (owner > admin > member). */
export type OrgRole = 'owner' | 'admin' | 'member';

const ROLE_RANK: Record<OrgRole, number> = { member: 1, admin: 2, owner: 3 };

/** true when `role` is `required` or above it */
export function hasRole(role: OrgRole, required: OrgRole): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

/**
 * No account: the `accountId` of an API key's membership. It names no row, so code that
 * mistakes it for a person finds nobody instead of the wrong one; who acted is `actor`.
 */
export const NO_ACCOUNT = '00000000-0000-0000-0000-000000000000';

/** The caller's membership of the organization a route's path (or a query's `org-id`) names. */
export interface Membership {
  organizationId: string;
  /** the member account; {@link NO_ACCOUNT} when the caller is an API key (see `apiKeyId`) */
  accountId: string;
  role: OrgRole;
  joinedAt: Date;
  /** set when the caller is an API key of the organization: the key's id */
  apiKeyId?: string;
}

/** Finds an account's membership of an organization with one query; undefined for a non-member or a missing organization. */
export type MembershipResolver = (organizationId: string, accountId: string) => Promise<Membership | undefined>;

/** An API key presented as the caller: it belongs to one organization and acts there with its role. */
export interface ApiKeyCaller {
  id: string;
  organizationId: string;
  /** never `owner`: a key cannot make or unmake owners, nor delete its organization */
  role: Exclude<OrgRole, 'owner'>;
  /** the key's non-secret part, for logs */
  prefix: string;
  createdAt: Date;
}

/**
 * Who acted, for audit entries (`appendAudit(trx, {actor, …})`, src/audit/log.ts): the account of
 * the access token, or the API key. Absent for an anonymous request.
 */
export type Actor = { accountId: string } | { apiKeyId: string };

export interface Caller {
  user?: AuthUser;
  apiKey?: ApiKeyCaller;
}

export function actorOf({ user, apiKey }: Caller): Actor | undefined {
  if (user) return { accountId: user.id };
  if (apiKey) return { apiKeyId: apiKey.id };
  return undefined;
}

/**
 * The caller's membership of `organizationId` with at least the role `required`: 401 without a
 * caller (`failure` says why a presented token was refused), 404 for a non-member or a missing
 * organization (one answer, so nothing tells them apart), 403 below the role. An account's
 * membership costs one query; a key's none.
 */
export async function authorizeOrg(
  caller: Caller,
  organizationId: string,
  required: OrgRole,
  resolve: MembershipResolver,
  failure?: string,
): Promise<Membership> {
  let membership: Membership | undefined;
  if (caller.user) {
    membership = await resolve(organizationId, caller.user.id);
  } else if (caller.apiKey) {
    const key = caller.apiKey;
    membership =
      key.organizationId === organizationId ? { organizationId, accountId: NO_ACCOUNT, role: key.role, joinedAt: key.createdAt, apiKeyId: key.id } : undefined;
  } else {
    throw unauthorized(failure ?? 'Authentication required');
  }
  if (!membership) throw notFound('No such organization');
  if (!hasRole(membership.role, required)) {
    const words = phrase(
      "This needs the role {required}{required, select, owner {} other { or above}} in the organization; {holder, select, key {the API key's} other {yours}} is {role}",
      { required, holder: membership.apiKeyId ? 'key' : 'account', role: membership.role },
    );
    throw forbidden(words, {
      'required-role': required,
      role: membership.role,
    });
  }
  return membership;
}
