/**
 * The server's signing keys (docs/oauth.md, "Signing keys"): EdDSA (Ed25519) for access tokens,
 * RS256 and ES256 for ID tokens. They live in the database (`signing_key`), their private JWKs
 * sealed with ENCRYPTION_KEY, so every instance signs with the same key and a restart keeps them.
 * This is an instance's view of them: it loads them (again whenever `signing_keys` is notified),
 * picks the key that signs for each algorithm, publishes the JWKS and runs the rotation schedule;
 * signing-key-rotation.ts makes and adds the keys.
 *
 * The EdDSA key is made when the first server starts; the ID-token keys (RS256, ES256) when the
 * OAuth provider first needs them (`ensure`), so a system no app signs in with never pays for an
 * RSA key (tens to hundreds of ms of CPU). An algorithm's first key signs at once: no token of
 * that algorithm exists yet, and the JWKS publishes it from then on.
 *
 * A rotated-in key is published at once and starts signing `activationDelay` seconds later, on
 * every instance at the same moment. A key that a newer one replaced stays published `retention`
 * seconds longer (the longest token lifetime), then drops out of the JWKS.
 */
import { createPrivateKey, createPublicKey, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { DB } from '../db/database.js';
import type { ChannelSubscriber, DatabaseListener } from '../db/listener.js';
import type { Logger } from '../logging/logger.js';
import type { SecretBox } from './secret-box.js';
import {
  addFirstKeys,
  KEY_KINDS,
  type KeyKind,
  kindOf,
  type PublicJwk,
  rotateIfDue,
  rotateSigningKeys,
  SIGNING_KEYS_CHANNEL,
  type SigningAlg,
} from './signing-key-rotation.js';

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  /** what it signs: `EdDSA` access tokens, the others ID tokens (signing-key-rotation.ts) */
  kind: KeyKind;
  publicJwk: PublicJwk;
  publicKey: KeyObject;
  /** undefined when the sealed part cannot be opened (another ENCRYPTION_KEY): it still verifies */
  privateKey: KeyObject | undefined;
  privateJwk: JWK | undefined;
  activeFrom: number;
}

/** The keys the OAuth provider signs ID tokens with: made when it first needs them. */
export const ID_TOKEN_ALGS: readonly KeyKind[] = ['RS256', 'ES256', 'EdDSA-id'];

export interface SigningKeysOptions {
  db: DB;
  box: SecretBox;
  log: Logger;
  /** seconds a new key waits before it signs */
  activationDelay: number;
  /** seconds a replaced key stays published: the longest life of a token it signed */
  retention: number;
  rotationDays: number;
  listener?: DatabaseListener;
}

const SCHEDULE_CHECK_MS = 3_600_000;

export class SigningKeys implements ChannelSubscriber {
  readonly channel = SIGNING_KEYS_CHANNEL;
  private keys: SigningKey[] = [];
  private readonly byKid = new Map<string, SigningKey>();
  private readonly changeListeners: Array<() => void> = [];
  private scheduleTimer: NodeJS.Timeout | undefined;
  private activationTimer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private lastFingerprint = '';
  private stopped = false;

  constructor(private readonly options: SigningKeysOptions) {
    options.listener?.subscribe(this);
  }

  /** Makes the first EdDSA key (once across instances), loads the keys, and starts the rotation schedule. */
  async start(): Promise<void> {
    await rotateIfDue(this.options.db, this.options.box, this.options.rotationDays, this.options.activationDelay);
    await this.load();
    // a current key whose private part cannot be opened (ENCRYPTION_KEY changed, or a development
    // server whose secret was generated): new keys sign at once; the old ones still verify
    if (this.algorithms().some((alg) => !this.current(alg)?.privateKey)) {
      this.options.log.warn(
        'auth/signing-key-unreadable',
        'The current signing keys cannot be opened with this ENCRYPTION_KEY: new keys sign from now; tokens signed before still verify until they expire',
      );
      await rotateSigningKeys(this.options.db, this.options.box, 0);
      await this.load();
    }
    this.scheduleTimer = setInterval(() => void this.checkSchedule(), SCHEDULE_CHECK_MS);
    this.scheduleTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.scheduleTimer);
    clearTimeout(this.activationTimer);
    await this.loading;
  }

  /**
   * Makes the first key of each of `algs` that has none yet (once across instances) and loads
   * it: the OAuth provider asks for its ID-token keys before it is first built.
   */
  async ensure(algs: readonly KeyKind[]): Promise<void> {
    if (algs.every((kind) => this.keys.some((k) => k.kind === kind))) return;
    const kids = await addFirstKeys(this.options.db, this.options.box, algs);
    if (kids.length > 0) this.options.log.info('auth/signing-keys-added', 'First signing keys of the ID-token algorithms made', { kids });
    // a read begun before the keys were committed would not see them: the next one does
    await this.loading?.catch(() => undefined);
    await this.load();
  }

  /** The kinds that have a key here (EdDSA always, once started). */
  private algorithms(): KeyKind[] {
    return KEY_KINDS.filter((kind) => this.keys.some((k) => k.kind === kind));
  }

  /** Called when the set of published keys or a current key changes (the provider rebuilds its keystore). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** When the database's first key was made (ms): JWT_SECRET's tokens from before it live one access-token lifetime past it at most. */
  firstMadeAt: number | undefined;

  /** The key that signs now for `alg`: the newest whose `active_from` has come (every instance picks the same). */
  current(alg: KeyKind, now = Date.now()): SigningKey | undefined {
    let chosen: SigningKey | undefined;
    for (const key of this.keys) if (key.kind === alg && key.activeFrom <= now && (!chosen || key.activeFrom >= chosen.activeFrom)) chosen = key;
    return chosen;
  }

  /** A published key by kid (verification). */
  find(kid: string): SigningKey | undefined {
    return this.byKid.get(kid);
  }

  /** Every key that signs, will sign, or whose tokens may still be alive: current ones first (oidc-provider signs with the first of an alg). */
  published(now = Date.now()): SigningKey[] {
    const retentionMs = this.options.retention * 1000;
    const currents = new Set(KEY_KINDS.map((kind) => this.current(kind, now)));
    const live = KEY_KINDS.flatMap((kind) => {
      const mine = this.keys.filter((k) => k.kind === kind).sort((a, b) => a.activeFrom - b.activeFrom);
      return mine.filter((_key, i) => {
        const next = mine[i + 1];
        const replacedAt = next && next.activeFrom <= now ? next.activeFrom : undefined;
        return replacedAt === undefined || replacedAt + retentionMs > now;
      });
    });
    return [...live.filter((k) => currents.has(k)), ...live.filter((k) => !currents.has(k))];
  }

  /** `{keys}` of the JWKS document: public members only. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.published().map((k) => k.publicJwk) };
  }

  /** Rotates now (the command, through the running server on PGlite). */
  async rotate(): Promise<string[]> {
    const kids = await rotateSigningKeys(this.options.db, this.options.box, this.options.activationDelay);
    await this.load();
    return kids;
  }

  onNotification(): void {
    void this.load();
  }

  catchUp(): Promise<void> {
    return this.load();
  }

  private async checkSchedule(): Promise<void> {
    try {
      const kids = await rotateIfDue(this.options.db, this.options.box, this.options.rotationDays, this.options.activationDelay);
      if (kids.length > 0) this.options.log.info('auth/signing-keys-rotated', 'Signing keys rotated on schedule', { kids });
      await this.load();
    } catch (err) {
      if (!this.stopped) this.options.log.warn('auth/signing-key-rotation-failed', `Rotating the signing keys failed: ${(err as Error).message}`);
    }
  }

  private load(): Promise<void> {
    this.loading ??= this.read().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async read(): Promise<void> {
    let rows: Array<{
      kid: string;
      alg: SigningAlg;
      purpose: 'access' | 'id-token';
      public_jwk: unknown;
      private_sealed: string;
      active_from: Date;
      created_at: Date;
    }>;
    try {
      rows = await this.options.db
        .selectFrom('signing_key')
        .select(['kid', 'alg', 'purpose', 'public_jwk', 'private_sealed', 'active_from', 'created_at'])
        .execute();
    } catch (err) {
      if (this.stopped || this.keys.length === 0) throw err;
      this.options.log.warn('auth/signing-keys-read-failed', `Reading the signing keys failed: ${(err as Error).message}`);
      return;
    }
    const keys = rows.map((row): SigningKey => {
      const known = this.byKid.get(row.kid);
      if (known) return known;
      const publicJwk = (typeof row.public_jwk === 'string' ? JSON.parse(row.public_jwk) : row.public_jwk) as PublicJwk;
      let privateJwk: JWK | undefined;
      try {
        privateJwk = JSON.parse(this.options.box.open(row.private_sealed, row.kid)) as JWK;
      } catch {
        privateJwk = undefined;
      }
      return {
        kid: row.kid,
        alg: row.alg,
        kind: kindOf(row.alg, row.purpose),
        publicJwk,
        publicKey: createPublicKey({ key: publicJwk as unknown as JsonWebKeyInput['key'], format: 'jwk' }),
        privateKey: privateJwk ? createPrivateKey({ key: privateJwk as JsonWebKeyInput['key'], format: 'jwk' }) : undefined,
        privateJwk,
        activeFrom: row.active_from.getTime(),
      };
    });
    this.keys = keys;
    if (rows.length > 0) this.firstMadeAt = Math.min(...rows.map((row) => row.created_at.getTime()));
    this.refresh();
  }

  /** Recomputes the published set; listeners hear of a change. */
  private refresh(): void {
    this.byKid.clear();
    for (const key of this.published()) this.byKid.set(key.kid, key);
    this.scheduleActivation();
    const now = this.fingerprint();
    if (now === this.lastFingerprint) return;
    this.lastFingerprint = now;
    for (const listener of this.changeListeners) listener();
  }

  /** What the provider's keystore depends on: the published kids, current ones first. */
  private fingerprint(): string {
    return this.published()
      .map((k) => k.kid)
      .join(',');
  }

  /** Wakes up when the next pending key starts signing (or a replaced one drops out), so listeners hear of it. */
  private scheduleActivation(): void {
    clearTimeout(this.activationTimer);
    if (this.stopped) return;
    const now = Date.now();
    const moments = this.keys.flatMap((k) => [k.activeFrom, k.activeFrom + this.options.retention * 1000]).filter((t) => t > now);
    if (moments.length === 0) return;
    const wait = Math.min(Math.min(...moments) - now + 50, 2_147_000_000);
    this.activationTimer = setTimeout(() => this.refresh(), wait);
    this.activationTimer.unref();
  }
}
