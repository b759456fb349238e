/**
 * Organizations' OAuth apps (admins): made, listed, edited, deleted, their secret rotated. A
 * confidential app's secret (256 random bits) is shown once; only its SHA-256 is kept, and the
 * provider compares a presented secret's hash (provider.ts). Each change and its audit entry
 * commit in one transaction; deleting an app ends every grant of it in that transaction.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { AdapterPayload } from 'oidc-provider';
import { appendAudit, type ClientOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { notFound, requestCoercion, type FieldError } from '../http/errors.js';
import type { Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { redirectUriProblem } from './redirect-uris.js';
import type { Grants } from './grants.js';
import type { ClientSecret, CreatedOAuthApp, CreateOAuthApp, OAuthApp, OAuthApps, UpdateOAuthApp } from './schemas.js';

const COLUMNS = ['id', 'client_id', 'name', 'redirect_uris', 'confidential', 'scopes', 'created_at'] as const;

interface AppRow {
  id: string;
  client_id: string;
  name: string;
  redirect_uris: string[];
  confidential: boolean;
  scopes: string[];
  created_at: Date;
}

const toApp = (row: AppRow): OAuthApp => ({
  id: row.id,
  'client-id': row.client_id,
  name: row.name,
  'redirect-uris': row.redirect_uris,
  confidential: row.confidential,
  scopes: row.scopes,
  'created-at': row.created_at.toISOString(),
});

export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Whether a presented secret is the one whose hash is kept (constant time). */
export function secretMatches(presented: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(presented), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function checkRedirectUris(uris: readonly string[] | undefined): void {
  const errors: FieldError[] = [];
  (uris ?? []).forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) errors.push({ path: `/redirect-uris/${i}`, message: problem });
  });
  if (errors.length > 0) throw requestCoercion('body', errors);
}

/** An admin acting on the organization's apps, and where from. */
export interface AppRequest {
  membership: Membership;
  accountId: string;
  origin: ClientOrigin;
}

export class OAuthAppService {
  constructor(private readonly deps: { db: DB; log: Logger; grants: Grants }) {}

  async create({ membership, accountId, origin }: AppRequest, input: CreateOAuthApp): Promise<CreatedOAuthApp> {
    const name = input.name.trim();
    if (!name) throw requestCoercion('body', [{ path: '/name', message: 'must not be blank' }]);
    checkRedirectUris(input['redirect-uris']);
    const secret = input.confidential ? randomBytes(32).toString('base64url') : undefined;
    const clientId = `app_${randomBytes(12).toString('base64url')}`;
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('oauth_app')
        .values({
          organization_id: membership.organizationId,
          client_id: clientId,
          name,
          redirect_uris: input['redirect-uris'],
          confidential: input.confidential,
          scopes: input.scopes,
          secret_hash: secret ? hashSecret(secret) : null,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      await this.audit(trx, 'oauth-app.created', { membership, accountId, origin }, inserted);
      return inserted;
    });
    this.deps.log.info('oauth/app-created', 'OAuth app created', { 'organization-id': membership.organizationId, 'client-id': clientId });
    return { ...toApp(row), ...(secret ? { 'client-secret': secret } : {}) };
  }

  async list(organizationId: string): Promise<OAuthApps> {
    const rows = await this.deps.db
      .selectFrom('oauth_app')
      .select(COLUMNS)
      .where('organization_id', '=', organizationId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return { 'oauth-apps': rows.map(toApp) };
  }

  async get(organizationId: string, appId: string): Promise<OAuthApp> {
    const row = await this.deps.db
      .selectFrom('oauth_app')
      .select(COLUMNS)
      .where('organization_id', '=', organizationId)
      .where('id', '=', appId)
      .executeTakeFirst();
    if (!row) throw notFound('No such OAuth app', { 'app-id': appId });
    return toApp(row);
  }

  async update(who: AppRequest, appId: string, input: UpdateOAuthApp): Promise<OAuthApp> {
    checkRedirectUris(input['redirect-uris']);
    const name = input.name?.trim();
    if (name === '') throw requestCoercion('body', [{ path: '/name', message: 'must not be blank' }]);
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('oauth_app')
        .set({
          ...(name ? { name } : {}),
          ...(input['redirect-uris'] ? { redirect_uris: input['redirect-uris'] } : {}),
          ...(input.scopes ? { scopes: input.scopes } : {}),
          updated_at: sql`now()`,
        })
        .where('organization_id', '=', who.membership.organizationId)
        .where('id', '=', appId)
        .returning(COLUMNS)
        .executeTakeFirst();
      if (!updated) throw notFound('No such OAuth app', { 'app-id': appId });
      await this.audit(trx, 'oauth-app.updated', who, updated);
      return updated;
    });
    return toApp(row);
  }

  /** A new secret; the previous one stops at once. A public app has none: 409-free answer is a 400. */
  async rotateSecret(who: AppRequest, appId: string): Promise<ClientSecret> {
    const secret = randomBytes(32).toString('base64url');
    await this.deps.db.transaction().execute(async (trx) => {
      const app = await trx
        .selectFrom('oauth_app')
        .select(COLUMNS)
        .where('organization_id', '=', who.membership.organizationId)
        .where('id', '=', appId)
        .forUpdate()
        .executeTakeFirst();
      if (!app) throw notFound('No such OAuth app', { 'app-id': appId });
      if (!app.confidential) throw requestCoercion('path', [{ path: '/appId', message: 'is a public app: it has no secret (PKCE alone)' }]);
      await trx
        .updateTable('oauth_app')
        .set({ secret_hash: hashSecret(secret), updated_at: sql`now()` })
        .where('id', '=', appId)
        .execute();
      await this.audit(trx, 'oauth-app.secret-rotated', who, app);
    });
    return { 'client-secret': secret };
  }

  /** Deletes the app and ends every grant of it, in one transaction. */
  async delete(who: AppRequest, appId: string): Promise<void> {
    const ended = await this.deps.db.transaction().execute(async (trx) => {
      const app = await trx
        .deleteFrom('oauth_app')
        .where('organization_id', '=', who.membership.organizationId)
        .where('id', '=', appId)
        .returning(COLUMNS)
        .executeTakeFirst();
      if (!app) throw notFound('No such OAuth app', { 'app-id': appId });
      await this.audit(trx, 'oauth-app.deleted', who, app);
      return this.deps.grants.end(trx, { clientId: app.client_id }, 'app-deleted', who.origin);
    });
    this.deps.grants.after(ended);
  }

  /** The app as oidc-provider's client metadata, by client id (the adapter's `Client` model). */
  async clientMetadata(clientId: string, presentedBy: 'basic' | 'post'): Promise<AdapterPayload | undefined> {
    const app = await this.deps.db
      .selectFrom('oauth_app')
      .select(['client_id', 'name', 'redirect_uris', 'confidential', 'scopes', 'secret_hash'])
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!app) return undefined;
    return {
      client_id: app.client_id,
      client_name: app.name,
      redirect_uris: app.redirect_uris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: app.scopes.join(' '),
      // either method works for a confidential app: the one the request uses is the one registered
      token_endpoint_auth_method: app.confidential ? (presentedBy === 'basic' ? 'client_secret_basic' : 'client_secret_post') : 'none',
      // the hash: the provider's comparison hashes the presented secret (provider.ts)
      ...(app.secret_hash ? { client_secret: app.secret_hash } : {}),
    };
  }

  private async audit(trx: DB, action: string, { membership, accountId, origin }: AppRequest, app: AppRow): Promise<void> {
    await appendAudit(trx, {
      action,
      organizationId: membership.organizationId,
      accountId,
      actor: { accountId },
      target: { type: 'oauth-app', id: app.id },
      details: { 'client-id': app.client_id, name: app.name },
      origin,
    });
  }
}
