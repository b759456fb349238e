/**
 * Refresh tokens: opaque (256 random bits), stored as a SHA-256 hash for lookup and sealed
 * with the server key, single-use, rotated on every refresh. Every token descends from one
 * log-in (its family); the family expires absolutely `ttl` after the log-in.
 *
 * Reuse: presenting the token that was just rotated again within the grace window answers
 * with the family's current token (two tabs refreshing at once both stay logged in); any
 * other reuse revokes the whole family. The presented token's row is locked (`for update`)
 * for the decision, so the rule holds across connections and instances.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { DB } from '../db/database.js';

export interface RefreshSettings {
  secret: string;
  /** family lifetime from log-in, seconds */
  ttl: number;
  /** seconds in which the just-rotated token may be presented again; 0 = strict */
  reuseGrace: number;
}

export type RotateResult =
  | { outcome: 'rotated' | 'grace'; accountId: string; token: string; expiresAt: Date }
  | { outcome: 'invalid' | 'expired' }
  | { outcome: 'reused'; accountId: string; familyId: string };

export interface IssuedRefreshToken {
  token: string;
  expiresAt: Date;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class RefreshTokens {
  private readonly sealKey: Buffer;

  constructor(private readonly db: DB, private readonly settings: RefreshSettings) {
    this.sealKey = Buffer.from(hkdfSync('sha256', settings.secret, 'saas-refresh-token', 'seal', 32));
  }

  private seal(token: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  private unseal(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.sealKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }

  /** Starts a family for a log-in and returns its first token. */
  async issue(accountId: string): Promise<IssuedRefreshToken> {
    const expiresAt = new Date(Date.now() + this.settings.ttl * 1000);
    const token = randomBytes(32).toString('base64url');
    await this.db.transaction().execute(async (trx) => {
      const family = await trx.insertInto('refresh_family').values({ account_id: accountId, expires_at: expiresAt }).returning('id').executeTakeFirstOrThrow();
      await trx.insertInto('refresh_token').values({ family_id: family.id, token_hash: hashToken(token), token_sealed: this.seal(token) }).execute();
    });
    return { token, expiresAt };
  }

  /** Exchanges a token for its successor, applying the reuse rules. */
  async rotate(token: string): Promise<RotateResult> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('refresh_token as t')
        .innerJoin('refresh_family as f', 'f.id', 't.family_id')
        .select(['t.id', 't.family_id', 't.rotated_at', 't.replaced_by', 'f.account_id', 'f.expires_at', 'f.revoked_at'])
        .where('t.token_hash', '=', hashToken(token))
        .forUpdate('t')
        .executeTakeFirst();
      if (!row || row.revoked_at) return { outcome: 'invalid' as const };
      if (row.expires_at.getTime() <= Date.now()) return { outcome: 'expired' as const };

      if (!row.rotated_at) {
        const next = randomBytes(32).toString('base64url');
        const inserted = await trx.insertInto('refresh_token')
          .values({ family_id: row.family_id, token_hash: hashToken(next), token_sealed: this.seal(next) })
          .returning('id').executeTakeFirstOrThrow();
        await trx.updateTable('refresh_token').set({ rotated_at: sql`now()`, replaced_by: inserted.id }).where('id', '=', row.id).execute();
        return { outcome: 'rotated' as const, accountId: row.account_id, token: next, expiresAt: row.expires_at };
      }

      // Reuse. Inside the grace window, the immediate parent of the family's current token
      // gets that current token back; nothing new is minted.
      const withinGrace = this.settings.reuseGrace > 0 && Date.now() - row.rotated_at.getTime() <= this.settings.reuseGrace * 1000;
      if (withinGrace && row.replaced_by) {
        const current = await trx.selectFrom('refresh_token').select(['token_sealed', 'rotated_at'])
          .where('id', '=', row.replaced_by).executeTakeFirst();
        if (current && !current.rotated_at) {
          return { outcome: 'grace' as const, accountId: row.account_id, token: this.unseal(current.token_sealed), expiresAt: row.expires_at };
        }
      }
      await trx.updateTable('refresh_family').set({ revoked_at: sql`now()` }).where('id', '=', row.family_id).execute();
      return { outcome: 'reused' as const, accountId: row.account_id, familyId: row.family_id };
    });
  }

  /** Revokes the family of a token (log-out). Unknown tokens are ignored. */
  async revokeFamilyOf(token: string): Promise<boolean> {
    const row = await this.db.selectFrom('refresh_token').select('family_id').where('token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!row) return false;
    await this.db.updateTable('refresh_family').set({ revoked_at: sql`now()` }).where('id', '=', row.family_id).where('revoked_at', 'is', null).execute();
    return true;
  }
}
