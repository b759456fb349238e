/**
 * SCIM Users (RFC 7643 §4.1, RFC 7644) of one organization: its members, as the directory sees
 * them. `id` is the account id; `userName` the email. Creating a user makes (or links, by email,
 * only when the account's address is verified) the account and its membership with the token's
 * default role; `active: false` suspends the
 * membership and ends the account's sessions on every instance; DELETE removes the membership.
 * Filters are parsed by scim2-parse-filter and PATCH operations applied by scim-patch (both the
 * Okta and the Entra ID styles). Owners are not the directory's to suspend or remove. Each
 * change of membership emits its `member.*` webhook event in its own transaction, as invitations
 * and removals do: added, updated (suspended or lifted), removed.
 */
import type { Transaction } from 'kysely';
import { filter as compileFilter, parse as parseFilter, type Filter } from 'scim2-parse-filter';
import { scimPatch, ScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { insertAccount, normalizeEmail } from '../account/service.js';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import { invitationRolesBeyond, revokeInvitationsSentBy } from '../orgs/data.js';
import type { DomainService } from '../sso/domains.js';
import { FORBIDDEN_KEYS } from '../shared/forbidden-keys.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { scimBadRequest, scimNotFound, ScimHttpError } from './errors.js';
import type { ScimCaller } from './tokens.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MAX_COUNT = 200;
const EMAIL = /^[^\s@<>()",;:\\]+@[a-z0-9.-]+\.[a-z]{2,63}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

interface MemberRow {
  id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'member';
  joined_at: Date;
  suspended_at: Date | null;
  scim_external_id: string | null;
}

/** What a request gives: the user's fields we keep. */
interface UserInput {
  userName: string;
  name: string | null;
  externalId: string | null;
  active: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** `active` as directories send it: a boolean, or (Entra ID) the strings "True"/"False". */
function activeOf(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw scimBadRequest('active must be true or false', 'invalidValue');
}

function inputOf(body: Record<string, unknown>, current?: ScimUser): UserInput {
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

export interface ScimUserDeps {
  db: DB;
  domains: DomainService;
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccount'>;
  baseUrl: string;
  log: Logger;
}

export class ScimUserService {
  constructor(private readonly deps: ScimUserDeps) {}

  private toUser(row: MemberRow): ScimUser {
    return {
      schemas: [USER_SCHEMA],
      id: row.id,
      ...(row.scim_external_id ? { externalId: row.scim_external_id } : {}),
      userName: row.email,
      ...(row.name ? { name: { formatted: row.name }, displayName: row.name } : {}),
      emails: [{ value: row.email, primary: true, type: 'work' }],
      active: row.suspended_at === null,
      meta: { resourceType: 'User', created: row.joined_at, lastModified: row.suspended_at ?? row.joined_at, location: `${this.deps.baseUrl}/Users/${row.id}` },
    };
  }

  private members(organizationId: string) {
    return this.deps.db
      .selectFrom('membership')
      .innerJoin('account', 'account.id', 'membership.account_id')
      .select([
        'account.id',
        'account.email',
        'account.name',
        'membership.role',
        'membership.joined_at',
        'membership.suspended_at',
        'membership.scim_external_id',
      ])
      .where('membership.organization_id', '=', organizationId);
  }

  private async row(organizationId: string, id: string): Promise<MemberRow> {
    if (!UUID.test(id)) throw scimNotFound();
    const row = await this.members(organizationId).where('account.id', '=', id).executeTakeFirst();
    if (!row) throw scimNotFound();
    return row;
  }

  async get(caller: ScimCaller, id: string): Promise<ScimUser> {
    return this.toUser(await this.row(caller.organizationId, id));
  }

  /** `filter` (scim2-parse-filter), 1-based `startIndex`, `count` (at most 200). */
  async list(caller: ScimCaller, query: { filter?: string; startIndex?: string; count?: string }): Promise<Record<string, unknown>> {
    const startIndex = query.startIndex === undefined ? 1 : Math.max(1, positive(query.startIndex, 'startIndex'));
    const count = query.count === undefined ? 100 : Math.min(MAX_COUNT, positive(query.count, 'count', true));
    let ast: Filter | undefined;
    if (query.filter !== undefined && query.filter.trim() !== '') {
      try {
        ast = parseFilter(query.filter);
      } catch (err) {
        throw scimBadRequest(`The filter cannot be parsed: ${(err as Error).message.slice(0, 200)}`, 'invalidFilter');
      }
    }
    let rows: MemberRow[];
    // the directories' own question (`userName eq "…"`) is one indexed lookup; anything else is matched in memory
    if (ast && ast.op === 'eq' && 'attrPath' in ast && ast.attrPath.toLowerCase() === 'username' && typeof ast.compValue === 'string') {
      rows = await this.members(caller.organizationId).where('account.email', '=', normalizeEmail(ast.compValue)).execute();
      ast = undefined;
    } else {
      rows = await this.members(caller.organizationId).orderBy('membership.joined_at').orderBy('account.id').execute();
    }
    let users = rows.map((r) => this.toUser(r));
    if (ast) {
      let matches: (r: unknown) => boolean;
      try {
        matches = compileFilter(ast);
      } catch (err) {
        throw scimBadRequest(`The filter cannot be used: ${(err as Error).message.slice(0, 200)}`, 'invalidFilter');
      }
      users = users.filter((u) => matches(u));
    }
    const page = users.slice(startIndex - 1, startIndex - 1 + count);
    return { schemas: [LIST_SCHEMA], totalResults: users.length, startIndex, itemsPerPage: page.length, Resources: page };
  }

  /** Creates (or links by email) the account and its membership: 409 `uniqueness` when it is a member already. */
  async create(caller: ScimCaller, body: Record<string, unknown>, origin: RequestOrigin): Promise<ScimUser> {
    const input = inputOf(body);
    const orgId = caller.organizationId;
    const inVerifiedDomain = await this.deps.domains.isVerifiedFor(orgId, input.userName);
    // a directory speaks for the organization's own verified domains only: an account it made for
    // anyone else's address would squat that address and make its owner a member unasked
    if (!inVerifiedDomain) throw scimBadRequest(`${input.userName} is not in a verified domain of this organization`, 'invalidValue');
    const accountId = await this.deps.db.transaction().execute(async (trx) => {
      let account = await trx.selectFrom('account').select(['id', 'email_verified']).where('email', '=', input.userName).forUpdate().executeTakeFirst();
      if (account) {
        const member = await trx
          .selectFrom('membership')
          .select('role')
          .where('organization_id', '=', orgId)
          .where('account_id', '=', account.id)
          .executeTakeFirst();
        if (member) throw new ScimHttpError(409, `${input.userName} is already a user of this organization`, 'uniqueness');
        // nothing proved that whoever made this account holds the address (a squatter's sign-up): linking it would
        // hand the organization to its password and sessions. Its owner proves the address (a link, an email
        // sign-in, SAML), and the directory's next push links it
        if (!account.email_verified) {
          throw new ScimHttpError(
            409,
            `An account uses ${input.userName} but its address is not verified yet: it is linked once its owner proves it`,
            'uniqueness',
          );
        }
      } else {
        // the organization proved it owns the address's domain: its directory vouches for the address
        const inserted = await insertAccount(trx, { email: input.userName, name: input.name, passwordHash: null, emailVerified: true });
        await appendAudit(trx, {
          action: 'account.signed-up',
          organizationId: inserted.organizationId,
          accountId: inserted.id,
          actor: {},
          target: { type: 'account', id: inserted.id },
          details: { method: 'scim', 'organization-id': orgId },
          origin,
        });
        account = { id: inserted.id, email_verified: true };
      }
      const joined = await trx
        .insertInto('membership')
        .values({
          organization_id: orgId,
          account_id: account.id,
          role: caller.defaultRole,
          scim_external_id: input.externalId,
          suspended_at: input.active ? null : new Date(),
        })
        .returning(['role', 'joined_at', 'suspended_at'])
        .executeTakeFirstOrThrow();
      const profile = await trx.selectFrom('account').select(['email', 'name']).where('id', '=', account.id).executeTakeFirstOrThrow();
      await emitWebhookEvent(trx, orgId, 'member.added', { member: memberEvent({ id: account.id, ...profile, ...joined }) });
      await appendAudit(trx, {
        action: 'scim.user-provisioned',
        organizationId: orgId,
        accountId: account.id,
        actor: {},
        target: { type: 'account', id: account.id },
        details: { role: caller.defaultRole, active: input.active, 'scim-token-id': caller.tokenId },
        origin,
      });
      return account.id;
    });
    this.deps.log.info('scim/user-provisioned', 'User provisioned by the directory', { 'organization-id': orgId, 'account-id': accountId });
    return this.get(caller, accountId);
  }

  async replace(caller: ScimCaller, id: string, body: Record<string, unknown>, origin: RequestOrigin): Promise<ScimUser> {
    const current = await this.get(caller, id);
    const input = inputOf(body, current);
    if (input.userName !== current.userName) throw scimBadRequest("userName cannot be changed (it is the account's email)", 'mutability');
    return this.apply(caller, current, input, origin);
  }

  /** PATCH: scim-patch applies the operations to the current resource; `op` in any case and "True"/"False" strings are taken. */
  async patch(caller: ScimCaller, id: string, body: Record<string, unknown>, origin: RequestOrigin): Promise<ScimUser> {
    const current = await this.get(caller, id);
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
    let patched: ScimUser;
    try {
      const ops = operations.map((op) => ({ ...(op as object), op: String((op as { op?: unknown }).op ?? '').toLowerCase() })) as ScimPatchOperation[];
      patched = scimPatch(structuredClone(current), ops, { mutateDocument: true, treatMissingAsAdd: true });
    } catch (err) {
      if (err instanceof ScimError || err instanceof TypeError) {
        throw scimBadRequest(
          `The patch cannot be applied: ${(err as Error).message.slice(0, 200)}`,
          /path/i.test((err as Error).message) ? 'invalidPath' : 'invalidSyntax',
        );
      }
      throw err;
    }
    const input = inputOf(patched as unknown as Record<string, unknown>, current);
    if (input.userName !== current.userName) throw scimBadRequest("userName cannot be changed (it is the account's email)", 'mutability');
    return this.apply(caller, current, input, origin);
  }

  /** Writes the fields a directory owns (name when we made the account, external id, active) and acts on `active`. */
  private async apply(caller: ScimCaller, current: ScimUser, input: UserInput, origin: RequestOrigin): Promise<ScimUser> {
    const orgId = caller.organizationId;
    const change = await this.deps.db.transaction().execute(async (trx) => {
      const member = await trx
        .selectFrom('membership')
        .select(['role', 'suspended_at'])
        .where('organization_id', '=', orgId)
        .where('account_id', '=', current.id)
        .forUpdate()
        .executeTakeFirst();
      if (!member) throw scimNotFound();
      const suspend = !input.active && member.suspended_at === null;
      const lift = input.active && member.suspended_at !== null;
      if (suspend && member.role === 'owner') throw scimBadRequest('An owner of the organization cannot be suspended by the directory', 'mutability');
      const updated = await trx
        .updateTable('membership')
        .set({
          scim_external_id: input.externalId,
          ...(suspend ? { suspended_at: new Date() } : lift ? { suspended_at: null } : {}),
        })
        .where('organization_id', '=', orgId)
        .where('account_id', '=', current.id)
        .returning(['role', 'joined_at', 'suspended_at'])
        .executeTakeFirstOrThrow();
      if (suspend || lift) {
        await appendAudit(trx, {
          action: suspend ? 'scim.user-suspended' : 'scim.user-reactivated',
          organizationId: orgId,
          accountId: current.id,
          actor: {},
          target: { type: 'account', id: current.id },
          details: { 'scim-token-id': caller.tokenId },
          origin,
        });
        // access changed: a customer syncing from webhooks hears it as for a role change
        await emitWebhookEvent(trx, orgId, 'member.updated', {
          member: memberEvent({ id: current.id, email: current.userName, name: current.displayName ?? null, ...updated }),
        });
      }
      if (suspend) await revokeSentInvitations(trx, caller, current.id, 'inviter-suspended', origin);
      return { suspend, lift };
    });
    if (change.suspend) {
      // committed first: the membership grants nothing from here; every session of the account ends on every instance
      const ended = await this.deps.refreshTokens.revokeAllForAccount(current.id);
      this.deps.log.info('scim/user-suspended', 'User suspended by the directory; every session ended', {
        'organization-id': orgId,
        'account-id': current.id,
        sessions: ended.length,
      });
    } else if (change.lift) {
      this.deps.log.info('scim/user-reactivated', 'User reactivated by the directory', { 'organization-id': orgId, 'account-id': current.id });
    }
    return this.get(caller, current.id);
  }

  /** Removes the membership (the account stays: it may belong to other organizations). */
  async remove(caller: ScimCaller, id: string, origin: RequestOrigin): Promise<void> {
    const current = await this.get(caller, id);
    const orgId = caller.organizationId;
    await this.deps.db.transaction().execute(async (trx) => {
      const member = await trx
        .selectFrom('membership')
        .select(['role', 'joined_at', 'suspended_at'])
        .where('organization_id', '=', orgId)
        .where('account_id', '=', current.id)
        .forUpdate()
        .executeTakeFirst();
      if (!member) throw scimNotFound();
      if (member.role === 'owner') throw scimBadRequest('An owner of the organization cannot be removed by the directory', 'mutability');
      await trx.deleteFrom('membership').where('organization_id', '=', orgId).where('account_id', '=', current.id).execute();
      await emitWebhookEvent(trx, orgId, 'member.removed', {
        member: memberEvent({ id: current.id, email: current.userName, name: current.displayName ?? null, ...member }),
      });
      await appendAudit(trx, {
        action: 'scim.user-removed',
        organizationId: orgId,
        accountId: current.id,
        actor: {},
        target: { type: 'account', id: current.id },
        details: { 'scim-token-id': caller.tokenId },
        origin,
      });
      await revokeSentInvitations(trx, caller, current.id, 'inviter-removed', origin);
    });
    this.deps.log.info('scim/user-removed', 'User removed by the directory', { 'organization-id': orgId, 'account-id': current.id });
  }
}

/**
 * A member the directory suspends or removes can no longer grant a membership: what it sent is
 * revoked in the change's transaction, each audited with the directory as actor (the accept
 * checks the inviter's standing again: orgs/invitations.ts).
 */
async function revokeSentInvitations(
  trx: Transaction<DatabaseSchema>,
  caller: ScimCaller,
  inviterId: string,
  reason: string,
  origin: RequestOrigin,
): Promise<void> {
  const revoked = await revokeInvitationsSentBy(trx, inviterId, invitationRolesBeyond(undefined), caller.organizationId);
  for (const invitation of revoked) {
    await appendAudit(trx, {
      action: 'org.invitation-revoked',
      organizationId: caller.organizationId,
      accountId: inviterId,
      actor: {},
      target: { type: 'invitation', id: invitation.id },
      details: { email: invitation.email, role: invitation.role, reason, 'invited-by': inviterId, 'scim-token-id': caller.tokenId },
      origin,
    });
  }
}

/** A `member.*` webhook event's member (docs/webhooks.md), with `suspended` (a directory's suspension grants nothing). */
function memberEvent(m: { id: string; email: string; name: string | null; role: string; joined_at: Date; suspended_at: Date | null }): Record<string, unknown> {
  return {
    'account-id': m.id,
    email: m.email,
    name: m.name,
    role: m.role,
    'joined-at': new Date(m.joined_at).toISOString(),
    suspended: m.suspended_at !== null,
  };
}

function positive(raw: string, name: string, zeroOk = false): number {
  if (!/^\d{1,9}$/.test(raw.trim())) throw scimBadRequest(`${name} must be a whole number`, 'invalidValue');
  const n = Number(raw.trim());
  if (!zeroOk && n < 1) throw scimBadRequest(`${name} must be at least 1`, 'invalidValue');
  return n;
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
