/**
 * oidc-provider's storage on the project's database (its adapter contract: upsert, find,
 * findByUid, consume, destroy, revokeByGrantId), so several instances on one PostgreSQL share
 * sessions, interactions, codes, refresh tokens and grants. Everything is one table,
 * `oauth_model`, by model name and id; three models are special:
 *
 * - `Client`: an organization's app is read from `oauth_app` (apps.ts); a dynamically registered
 *   client is stored here like the rest.
 * - `Grant`: a saved grant is also the person's connected app (`oauth_grant`, grants.ts); a
 *   destroyed one ends it there (its access tokens refused on every instance).
 * - `consume` marks a code or refresh token used in one statement that only succeeds once, so
 *   two instances redeeming the same code at once cannot both win: the loser is told it was used
 *   (and the provider revokes what the code issued).
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { sql } from 'kysely';
import type { DB } from '../db/database.js';

export interface AdapterDeps {
  db: DB;
  /** an organization's app as client metadata, by client id */
  findApp(clientId: string): Promise<AdapterPayload | undefined>;
  /** a grant was saved: the connected app's record follows it */
  grantSaved(id: string, payload: AdapterPayload, expiresAt: Date | null): Promise<void>;
  /** a grant was destroyed by the provider (a code or refresh token used twice, an expiry) */
  grantDestroyed(id: string): Promise<void>;
  /** a client registers itself (RFC 7591): throws the protocol's error to refuse it; what it answers is how long the client may stay unused, seconds */
  clientRegistering?(payload: AdapterPayload): number | undefined;
  /** seconds a registration access token lives (registration.ts) */
  registrationTokenTtl?: number;
  /** the product session (refresh family) whose sign-in the provider is saving a `Session` for, when it is one (session-binding.ts) */
  signingInSession?(): string | undefined;
}

export class KyselyAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly deps: AdapterDeps,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    if (this.model === 'Client') {
      // a registered client lives while grants use it (grants.ts extends it); unused, it expires
      const idle = this.deps.clientRegistering?.(payload);
      if (idle !== undefined) expiresIn = idle;
    }
    // the token that manages a registration goes with the registration's idle time at most (it has no expiry of its own)
    if (this.model === 'RegistrationAccessToken' && !expiresIn) expiresIn = this.deps.registrationTokenTtl;
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    if (this.model === 'Grant') await this.deps.grantSaved(id, payload, expiresAt);
    const sessionId = this.model === 'Session' ? this.deps.signingInSession?.() : undefined;
    const values = {
      payload: JSON.stringify(payload),
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: expiresAt,
    };
    await this.deps.db
      .insertInto('oauth_model')
      .values({ model: this.model, id, ...values, session_id: sessionId ?? null })
      // a Session saved outside a sign-in (another app's authorization) keeps the product session it was bound to
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(sessionId ? { ...values, session_id: sessionId } : values))
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.model === 'Client') {
      const app = await this.deps.findApp(id);
      if (app) return app;
    }
    return this.read('id', id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.read('uid', uid);
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const row = await this.deps.db
      .updateTable('oauth_model')
      .set({ consumed_at: sql`now()` })
      .where('model', '=', this.model)
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    // the loser of a race for one code: what the code issued is revoked as for a second use
    // (the provider is loaded: it is the one calling; the import is its cache)
    const { errors } = await import('oidc-provider');
    if (!row) throw new errors.InvalidGrant(`${this.model === 'AuthorizationCode' ? 'authorization code' : 'token'} already consumed`);
  }

  async destroy(id: string): Promise<void> {
    if (this.model === 'Grant') await this.deps.grantDestroyed(id);
    await this.deps.db.deleteFrom('oauth_model').where('model', '=', this.model).where('id', '=', id).execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.deps.db.deleteFrom('oauth_model').where('model', '=', this.model).where('grant_id', '=', grantId).execute();
  }

  private async read(column: 'id' | 'uid', value: string): Promise<AdapterPayload | undefined> {
    const row = await this.deps.db
      .selectFrom('oauth_model')
      .select(['payload', 'consumed_at'])
      .where('model', '=', this.model)
      .where(column, '=', value)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirst();
    if (!row) return undefined;
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as AdapterPayload;
    return row.consumed_at ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : payload;
  }
}

/**
 * Deletes what expired (hourly): nothing reads it any more; and the provider sessions whose
 * product session is gone (expired: an ended one took them with it), which count as signed out.
 */
export async function purgeExpired(db: DB): Promise<void> {
  await db.deleteFrom('oauth_model').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
  await db
    .deleteFrom('oauth_model')
    .where('model', '=', 'Session')
    .where((eb) =>
      eb.or([
        eb('session_id', 'is', null),
        eb.not(
          eb.exists(
            eb.selectFrom('refresh_family as f').select('f.id').whereRef('f.id', '=', 'oauth_model.session_id').where('f.expires_at', '>', sql<Date>`now()`),
          ),
        ),
      ]),
    )
    .execute();
}
