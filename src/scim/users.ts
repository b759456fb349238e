/**
 * SCIM Users (RFC 7643 §4.1, RFC 7644) of one organization: its members, as the directory sees
 * them, read and written. `id` is the account id; `userName` the email. Creating a user makes (or
 * links, by email, only when the account's address is verified) the account and its membership
 * with the token's default role; `active: false` suspends the membership and ends the account's
 * sessions on every instance; DELETE removes the membership. Owners are not the directory's to
 * suspend or remove. Each change of membership emits its `member.*` webhook event in its own
 * transaction, as invitations and removals do: added, updated (suspended or lifted), removed.
 * The documents, PATCH and filters are user-resource.ts's; the changes' side effects, member-effects.ts's.
 */
import { insertAccount } from '../account/service.js';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { RefreshTokens } from '../auth/refresh-tokens.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { DomainService } from '../sso/domains.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { scimBadRequest, scimNotFound, ScimHttpError } from './errors.js';
import { memberEvent, revokeSentInvitations } from './member-effects.js';
import type { ScimCaller } from './tokens.js';
import {
  inputOf,
  listRequestOf,
  listResponse,
  patchedUser,
  replacementOf,
  toScimUser,
  userNameAsked,
  type MemberRow,
  type ScimUser,
  type UserInput,
} from './user-resource.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ScimUserDeps {
  db: DB;
  domains: DomainService;
  refreshTokens: Pick<RefreshTokens, 'revokeAllForAccount'>;
  baseUrl: string;
  log: Logger;
}

export class ScimUserService {
  constructor(private readonly deps: ScimUserDeps) {}

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
    return toScimUser(await this.row(caller.organizationId, id), this.deps.baseUrl);
  }

  /** `filter` (scim2-parse-filter), 1-based `startIndex`, `count` (at most 200). */
  async list(caller: ScimCaller, query: { filter?: string; startIndex?: string; count?: string }): Promise<Record<string, unknown>> {
    const request = listRequestOf(query);
    const email = userNameAsked(request.filter);
    // the directories' own question (`userName eq "…"`) is one indexed lookup; anything else is matched in memory
    const rows =
      email !== undefined
        ? await this.members(caller.organizationId).where('account.email', '=', email).execute()
        : await this.members(caller.organizationId).orderBy('membership.joined_at').orderBy('account.id').execute();
    const users = rows.map((r) => toScimUser(r, this.deps.baseUrl));
    return listResponse(users, email !== undefined ? { ...request, filter: undefined } : request);
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
    return this.apply(caller, current, replacementOf(body, current), origin);
  }

  /** PATCH: scim-patch applies the operations to the current resource; `op` in any case and "True"/"False" strings are taken. */
  async patch(caller: ScimCaller, id: string, body: Record<string, unknown>, origin: RequestOrigin): Promise<ScimUser> {
    const current = await this.get(caller, id);
    const patched = patchedUser(current, body);
    return this.apply(caller, current, replacementOf(patched as unknown as Record<string, unknown>, current), origin);
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
