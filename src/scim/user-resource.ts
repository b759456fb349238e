/**
 * The SCIM User resource (RFC 7643 §4.1) apart from storage: its document, reading a user from a
 * POST or PUT body (Okta's and Entra ID's styles), PATCH operations applied by scim-patch, and a
 * list request's filter (scim2-parse-filter) and paging. Pure: users.ts reads and writes the rows.
 */
import { filter as compileFilter, parse as parseFilter, type Filter } from 'scim2-parse-filter';
import { scimPatch, ScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { normalizeEmail } from '../account/service.js';
import { FORBIDDEN_KEYS } from '../shared/forbidden-keys.js';
import { scimBadRequest } from './errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MAX_COUNT = 200;
const EMAIL = /^[^\s@<>()",;:\\]+@[a-z0-9.-]+\.[a-z]{2,63}$/i;

export interface ScimUser extends ScimResource {
  id: string;
  externalId?: string;
  userName: string;
  name?: { formatted?: string; givenName?: string; familyName?: string };
  displayName?: string;
  emails: Array<{ value: string; primary: boolean; type: string }>;
  active: boolean;
  meta: { resourceType: 'User'; created: Date; lastModified: Date; location: string };
}

/** A member of the organization as stored: its account and membership. */
export interface MemberRow {
  id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'member';
  joined_at: Date;
  suspended_at: Date | null;
  scim_external_id: string | null;
}

/** What a request gives: the user's fields we keep. */
export interface UserInput {
  userName: string;
  name: string | null;
  externalId: string | null;
  active: boolean;
}

/** The member as a SCIM User; `baseUrl` is the SCIM root its `meta.location` is under. */
export function toScimUser(row: MemberRow, baseUrl: string): ScimUser {
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...(row.scim_external_id ? { externalId: row.scim_external_id } : {}),
    userName: row.email,
    ...(row.name ? { name: { formatted: row.name }, displayName: row.name } : {}),
    emails: [{ value: row.email, primary: true, type: 'work' }],
    active: row.suspended_at === null,
    meta: { resourceType: 'User', created: row.joined_at, lastModified: row.suspended_at ?? row.joined_at, location: `${baseUrl}/Users/${row.id}` },
  };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** `active` as directories send it: a boolean, or (Entra ID) the strings "True"/"False". */
function activeOf(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw scimBadRequest('active must be true or false', 'invalidValue');
}

/** The fields of a user document; those it leaves out keep `current`'s (a new user's defaults without it). */
export function inputOf(body: Record<string, unknown>, current?: ScimUser): UserInput {
  const emails = Array.isArray(body.emails) ? (body.emails as Array<Record<string, unknown>>) : [];
  const primary = emails.find((e) => e && e.primary === true) ?? emails[0];
  const userName = str(body.userName) ?? str(primary?.value);
  if (!userName) throw scimBadRequest('userName is required', 'invalidValue');
  const email = normalizeEmail(userName);
  if (email.length > 254 || !EMAIL.test(email)) throw scimBadRequest('userName must be an email address', 'invalidValue');
  const nameObject = (body.name && typeof body.name === 'object' ? body.name : {}) as Record<string, unknown>;
  const given = str(nameObject.givenName);
  const family = str(nameObject.familyName);
  const name = str(body.displayName) ?? str(nameObject.formatted) ?? ([given, family].filter(Boolean).join(' ') || undefined);
  return {
    userName: email,
    name: name ? name.slice(0, 100) : (current?.displayName ?? null),
    externalId: str(body.externalId)?.slice(0, 256) ?? current?.externalId ?? null,
    active: activeOf(body.active, current?.active ?? true),
  };
}

/** A PUT's (or a patched) document read against `current`: userName, the account's email, cannot change. */
export function replacementOf(body: Record<string, unknown>, current: ScimUser): UserInput {
  const input = inputOf(body, current);
  if (input.userName !== current.userName) throw scimBadRequest("userName cannot be changed (it is the account's email)", 'mutability');
  return input;
}

/** PATCH: scim-patch applies the operations to a copy of `current`; `op` in any case is taken. */
export function patchedUser(current: ScimUser, body: Record<string, unknown>): ScimUser {
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_SCHEMA)) throw scimBadRequest(`The body must name the schema ${PATCH_SCHEMA}`, 'invalidSyntax');
  const operations = body.Operations;
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > 100)
    throw scimBadRequest('Operations must list 1 to 100 operations', 'invalidSyntax');
  // scim-patch walks a path's segments and a pathless value's keys (dotted ones too) into plain
  // objects: `__proto__` there would reach Object.prototype of the whole process
  if (operations.some((op) => pathReachesPrototype((op as { path?: unknown }).path) || keysReachPrototype((op as { value?: unknown }).value))) {
    throw scimBadRequest('A path or attribute name in the patch is not allowed', 'invalidPath');
  }
  try {
    const ops = operations.map((op) => ({ ...(op as object), op: String((op as { op?: unknown }).op ?? '').toLowerCase() })) as ScimPatchOperation[];
    return scimPatch(structuredClone(current), ops, { mutateDocument: true, treatMissingAsAdd: true });
  } catch (err) {
    if (err instanceof ScimError || err instanceof TypeError) {
      throw scimBadRequest(
        `The patch cannot be applied: ${(err as Error).message.slice(0, 200)}`,
        /path/i.test((err as Error).message) ? 'invalidPath' : 'invalidSyntax',
      );
    }
    throw err;
  }
}

/** The segments of a patch path (`name.givenName`, `emails[type eq "work"].value`, a schema URN prefix) name the prototype. */
function pathReachesPrototype(path: unknown): boolean {
  return typeof path === 'string' && path.split(/[.[\]:\s"]+/).some((segment) => FORBIDDEN_KEYS.has(segment));
}

/** A key of the value, at any depth (a dotted key is a path to scim-patch), names the prototype. */
function keysReachPrototype(node: unknown, depth = 0): boolean {
  if (depth > 32) return true;
  if (Array.isArray(node)) return node.some((item) => keysReachPrototype(item, depth + 1));
  if (node === null || typeof node !== 'object') return false;
  return Object.keys(node).some((key) => pathReachesPrototype(key) || keysReachPrototype((node as Record<string, unknown>)[key], depth + 1));
}

/** A list request: its parsed `filter`, 1-based `startIndex`, `count` (at most 200). */
export interface ListRequest {
  filter: Filter | undefined;
  startIndex: number;
  count: number;
}

export function listRequestOf(query: { filter?: string; startIndex?: string; count?: string }): ListRequest {
  const startIndex = query.startIndex === undefined ? 1 : Math.max(1, positive(query.startIndex, 'startIndex'));
  const count = query.count === undefined ? 100 : Math.min(MAX_COUNT, positive(query.count, 'count', true));
  let filter: Filter | undefined;
  if (query.filter !== undefined && query.filter.trim() !== '') {
    try {
      filter = parseFilter(query.filter);
    } catch (err) {
      throw scimBadRequest(`The filter cannot be parsed: ${(err as Error).message.slice(0, 200)}`, 'invalidFilter');
    }
  }
  return { filter, startIndex, count };
}

/** The email of a `userName eq "…"` filter, the directories' own question; undefined for any other filter. */
export function userNameAsked(filter: Filter | undefined): string | undefined {
  if (filter && filter.op === 'eq' && 'attrPath' in filter && filter.attrPath.toLowerCase() === 'username' && typeof filter.compValue === 'string') {
    return normalizeEmail(filter.compValue);
  }
  return undefined;
}

/** The ListResponse: the users `filter` matches (in memory), the page of them the request asks for. */
export function listResponse(users: ScimUser[], { filter, startIndex, count }: ListRequest): Record<string, unknown> {
  let matching = users;
  if (filter) {
    let matches: (r: unknown) => boolean;
    try {
      matches = compileFilter(filter);
    } catch (err) {
      throw scimBadRequest(`The filter cannot be used: ${(err as Error).message.slice(0, 200)}`, 'invalidFilter');
    }
    matching = users.filter((u) => matches(u));
  }
  const page = matching.slice(startIndex - 1, startIndex - 1 + count);
  return { schemas: [LIST_SCHEMA], totalResults: matching.length, startIndex, itemsPerPage: page.length, Resources: page };
}

function positive(raw: string, name: string, zeroOk = false): number {
  if (!/^\d{1,9}$/.test(raw.trim())) throw scimBadRequest(`${name} must be a whole number`, 'invalidValue');
  const n = Number(raw.trim());
  if (!zeroOk && n < 1) throw scimBadRequest(`${name} must be at least 1`, 'invalidValue');
  return n;
}
