/**
 * An organization's API keys: made, listed and revoked by its admins (people: the routes take no
 * key, so a leaked key cannot mint more keys or revoke the others). Each change and its audit
 * entry commit in one transaction. Revoking forgets the key on this instance right after the
 * commit; the other instances hear of it through the trigger's notification (verifier.ts).
 */
import { sql } from 'kysely';
import type { FastifyRequest } from 'fastify';
import { appendAudit, originOf } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { notFound, requestCoercion } from '../http/errors.js';
import type { AuthUser, Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import { newApiKey } from './format.js';
import type { ApiKey, ApiKeys, CreateApiKey, CreatedApiKey } from './schemas.js';

interface ApiKeyRow {
  id: string;
  name: string;
  role: 'admin' | 'member';
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = ['id', 'name', 'role', 'prefix', 'created_at', 'last_used_at'] as const;

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    prefix: row.prefix,
    'created-at': row.created_at.toISOString(),
    'last-used-at': row.last_used_at ? row.last_used_at.toISOString() : null,
  };
}

export interface ApiKeyServiceDeps {
  db: DB;
  log: Logger;
  /** forgets a revoked key on this instance at once (ApiKeyVerifier.forget) */
  onRevoked(keyId: string): void;
}

/** Who asks, and from where: an admin's membership (a person's) and the request. */
export interface ApiKeyRequest {
  membership: Membership;
  user: AuthUser;
  request: FastifyRequest;
}

export class ApiKeyService {
  constructor(private readonly deps: ApiKeyServiceDeps) {}

  /** A new key; the answer is the only place its secret ever appears. */
  async create({ membership, user, request }: ApiKeyRequest, input: CreateApiKey): Promise<CreatedApiKey> {
    const name = input.name.trim();
    if (!name) throw requestCoercion('body', [{ path: '/name', message: 'must not be blank' }]);
    const { key, prefix, hash } = newApiKey();
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('api_key')
        .values({
          organization_id: membership.organizationId,
          name,
          role: input.role,
          prefix,
          secret_hash: hash,
          created_by: user.id,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      await appendAudit(trx, {
        action: 'api-key.created',
        organizationId: membership.organizationId,
        accountId: user.id,
        actor: { accountId: user.id },
        target: { type: 'api-key', id: inserted.id },
        details: { name, role: input.role, prefix },
        origin: originOf(request),
      });
      await emitWebhookEvent(trx, membership.organizationId, 'api-key.created', { 'api-key': toApiKey(inserted) });
      return inserted;
    });
    this.deps.log.info('api-key/created', 'API key created', {
      'organization-id': membership.organizationId,
      'api-key-id': row.id,
      prefix,
      role: row.role,
      'by-account-id': user.id,
    });
    return { ...toApiKey(row), key };
  }

  /** The organization's live keys, newest first, without secrets. */
  async list(organizationId: string): Promise<ApiKeys> {
    const rows = await this.deps.db
      .selectFrom('api_key')
      .select(COLUMNS)
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return { 'api-keys': rows.map(toApiKey) };
  }

  /** Revokes a live key of the organization: refused from this moment on every instance. 404 for any other id. */
  async revoke({ membership, user, request }: ApiKeyRequest, keyId: string): Promise<void> {
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('api_key')
        .set({ revoked_at: sql`now()`, revoked_by: user.id })
        .where('id', '=', keyId)
        .where('organization_id', '=', membership.organizationId)
        .where('revoked_at', 'is', null)
        .returning(COLUMNS)
        .executeTakeFirst();
      if (!revoked) throw notFound('No such API key', { 'api-key-id': keyId });
      await emitWebhookEvent(trx, membership.organizationId, 'api-key.revoked', { 'api-key': toApiKey(revoked) });
      await appendAudit(trx, {
        action: 'api-key.revoked',
        organizationId: membership.organizationId,
        accountId: user.id,
        actor: { accountId: user.id },
        target: { type: 'api-key', id: revoked.id },
        details: { name: revoked.name, role: revoked.role, prefix: revoked.prefix },
        origin: originOf(request),
      });
      return revoked;
    });
    this.deps.onRevoked(row.id);
    this.deps.log.info('api-key/revoked', 'API key revoked', {
      'organization-id': membership.organizationId,
      'api-key-id': row.id,
      prefix: row.prefix,
      'by-account-id': user.id,
    });
  }
}
