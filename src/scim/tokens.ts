/**
 * An organization's SCIM bearer tokens (docs/sso.md, "5. Directory sync (SCIM 2.0)"): made by an
 * owner, shown once, stored as a SHA-256 hash; the organization a directory's request acts on
 * follows from its token.
 */
import { phrase, msg } from '../i18n/messages.js';
import { createHash, randomBytes } from 'node:crypto';
import { appendAudit } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { conflict, notFound } from '../http/errors.js';
import type { Logger } from '../logging/logger.js';
import { refusePersonal } from '../orgs/module.js';
import type { DomainCaller } from '../sso/domains.js';
import type { CreatedScimToken, CreateScimToken, ScimTokens } from './schemas.js';

const TOKEN_PREFIX = 'scim_';
const MAX_TOKENS = 10;
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Who a valid token lets in. */
export interface ScimCaller {
  tokenId: string;
  organizationId: string;
  defaultRole: 'member' | 'admin';
}

export class ScimTokenService {
  constructor(
    private readonly db: DB,
    private readonly log: Logger,
  ) {}

  async create(caller: DomainCaller, input: CreateScimToken): Promise<CreatedScimToken> {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = await this.db.transaction().execute(async (trx) => {
      await refusePersonal(trx, caller.organizationId, msg('A personal organization has only its owner: connect a directory to a shared organization'));
      const count = await trx
        .selectFrom('scim_token')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', caller.organizationId)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_TOKENS)
        throw conflict(phrase('An organization has at most {max} SCIM tokens', { max: MAX_TOKENS }), { type: 'too-many-tokens' });
      const inserted = await trx
        .insertInto('scim_token')
        .values({
          organization_id: caller.organizationId,
          name: input.name.trim(),
          default_role: input['default-role'] ?? 'member',
          token_hash: hashOf(token),
        })
        .returning(['id', 'name', 'default_role', 'created_at', 'last_used_at'])
        .executeTakeFirstOrThrow();
      await appendAudit(trx, {
        action: 'scim.token-created',
        organizationId: caller.organizationId,
        actor: caller.actor,
        target: { type: 'scim-token', id: inserted.id },
        details: { name: inserted.name, 'default-role': inserted.default_role },
        origin: caller.origin,
      });
      return inserted;
    });
    this.log.info('scim/token-created', 'SCIM token created', { 'organization-id': caller.organizationId, 'token-id': row.id });
    return { ...toToken(row), token };
  }

  async list(organizationId: string): Promise<ScimTokens> {
    const rows = await this.db
      .selectFrom('scim_token')
      .select(['id', 'name', 'default_role', 'created_at', 'last_used_at'])
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return { tokens: rows.map(toToken) };
  }

  async revoke(caller: DomainCaller, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('scim_token')
        .where('organization_id', '=', caller.organizationId)
        .where('id', '=', id)
        .returning(['id', 'name'])
        .executeTakeFirst();
      if (!gone) throw notFound('No such SCIM token in this organization');
      await appendAudit(trx, {
        action: 'scim.token-revoked',
        organizationId: caller.organizationId,
        actor: caller.actor,
        target: { type: 'scim-token', id: gone.id },
        details: { name: gone.name },
        origin: caller.origin,
      });
    });
  }

  /** The caller a bearer token stands for; undefined for anything else (revoked, malformed, unknown). */
  async authenticate(authorization: string | undefined): Promise<ScimCaller | undefined> {
    const m = /^Bearer\s+(scim_[A-Za-z0-9_-]{43})\s*$/i.exec(authorization ?? '');
    if (!m) return undefined;
    const row = await this.db
      .updateTable('scim_token')
      .set({ last_used_at: new Date() })
      .where('token_hash', '=', hashOf(m[1]))
      .returning(['id', 'organization_id', 'default_role'])
      .executeTakeFirst();
    return row && { tokenId: row.id, organizationId: row.organization_id, defaultRole: row.default_role };
  }
}

function toToken(row: { id: string; name: string; default_role: 'member' | 'admin'; created_at: Date; last_used_at: Date | null }) {
  return {
    id: row.id,
    name: row.name,
    'default-role': row.default_role,
    'created-at': new Date(row.created_at).toISOString(),
    'last-used-at': row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}
