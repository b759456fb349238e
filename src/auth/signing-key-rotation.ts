/**
 * Adding signing keys (docs/oauth.md, "Signing keys"): each is a new key pair whose private JWK
 * is sealed with ENCRYPTION_KEY (secret-box.ts, the kid as associated data) into `signing_key`,
 * and every instance hears `signing_keys` and reloads (signing-keys.ts). An algorithm's first key
 * signs at once: no token of that algorithm exists yet.
 *
 * A rotation adds one new key of each algorithm in use that starts signing `delaySeconds` later
 * (5 minutes, or one access-token lifetime when that is shorter): published at once, so
 * verifiers know it before any token carries it. The schedule rotates each algorithm whose newest
 * key is `rotationDays` old (an ID-token key made later than the EdDSA one keeps its own days).
 * Key changes (first keys, the schedule, the command) take one transaction-scoped advisory lock
 * and look again, so instances never add a key twice.
 */
import { createPublicKey, generateKeyPair as generateNodeKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { SecretBox } from './secret-box.js';

export type SigningAlg = 'EdDSA' | 'RS256' | 'ES256';
/**
 * What a key signs, as a slot with its own current key and schedule: `EdDSA` the access tokens
 * (the product's and the API's), `RS256`, `ES256` and `EdDSA-id` the provider's ID tokens. An app
 * that registers EdDSA ID tokens gets them from a key of their own, never the sessions' key.
 */
export type KeyKind = SigningAlg | 'EdDSA-id';
export const KEY_KINDS: readonly KeyKind[] = ['EdDSA', 'RS256', 'ES256', 'EdDSA-id'];
export const algOf = (kind: KeyKind): SigningAlg => (kind === 'EdDSA-id' ? 'EdDSA' : kind);
const purposeOf = (kind: KeyKind): 'access' | 'id-token' => (kind === 'EdDSA' ? 'access' : 'id-token');
export const kindOf = (alg: SigningAlg, purpose: 'access' | 'id-token'): KeyKind => (alg === 'EdDSA' && purpose === 'id-token' ? 'EdDSA-id' : alg);
export const SIGNING_KEYS_CHANNEL = 'signing_keys';

/** The advisory lock every rotation takes (an arbitrary constant of this purpose). */
const ROTATION_LOCK = 7_320_039;

const generateKeyPair = promisify(generateNodeKeyPair);

/** A public JWK as the JWKS publishes it: never a private member. */
export interface PublicJwk extends JWK {
  kid: string;
  alg: SigningAlg;
  use: 'sig';
}

async function newKey(alg: SigningAlg): Promise<{ publicJwk: PublicJwk; privateJwk: JWK }> {
  const { privateKey } =
    alg === 'EdDSA'
      ? await generateKeyPair('ed25519')
      : alg === 'ES256'
        ? await generateKeyPair('ec', { namedCurve: 'P-256' })
        : await generateKeyPair('rsa', { modulusLength: 2048 });
  const privateJwk = privateKey.export({ format: 'jwk' }) as JWK;
  const bare = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(bare);
  return { publicJwk: { ...bare, kid, alg, use: 'sig' }, privateJwk: { ...privateJwk, kid, alg, use: 'sig' } };
}

/** The key every system signs with from its first start (access tokens). */
const FIRST_ALG: KeyKind = 'EdDSA';

/** Adds one key of each of `kinds`, signing `delaySeconds` from now (database time), and tells every instance. */
async function insertKeys(trx: Transaction<DatabaseSchema>, box: SecretBox, kinds: readonly KeyKind[], delaySeconds: number): Promise<string[]> {
  const kids: string[] = [];
  for (const kind of kinds) {
    const { publicJwk, privateJwk } = await newKey(algOf(kind));
    await trx
      .insertInto('signing_key')
      .values({
        kid: publicJwk.kid,
        alg: algOf(kind),
        purpose: purposeOf(kind),
        public_jwk: JSON.stringify(publicJwk),
        private_sealed: box.seal(JSON.stringify(privateJwk), publicJwk.kid),
        active_from: sql<Date>`now() + ${delaySeconds}::int * interval '1 second'`,
      })
      .execute();
    kids.push(publicJwk.kid);
  }
  // a payload: the listener delivers no empty one
  if (kids.length > 0) await sql`select pg_notify(${SIGNING_KEYS_CHANNEL}, ${kids.join(',')})`.execute(trx);
  return kids;
}

const lock = (trx: Transaction<DatabaseSchema>) => sql`select pg_advisory_xact_lock(${ROTATION_LOCK})`.execute(trx);

/** Each kind that has a key, with its newest key's age against `rotationDays` (0 days: never due). */
async function algorithmsInUse(trx: Transaction<DatabaseSchema>, rotationDays = 0): Promise<Array<{ alg: KeyKind; due: boolean }>> {
  const { rows } = await sql<{ alg: SigningAlg; purpose: 'access' | 'id-token'; due: boolean }>`
    select alg, purpose, ${rotationDays}::int > 0 and max(created_at) < now() - ${rotationDays}::int * interval '1 day' as due
    from signing_key group by alg, purpose`.execute(trx);
  // in KEY_KINDS' order, so a rotation's kids come in the same order every time
  return KEY_KINDS.flatMap((kind) => rows.filter((r) => kindOf(r.alg, r.purpose) === kind).map((r) => ({ alg: kind, due: r.due })));
}

/** `npm run keys:rotate` and the running server's answer to it: new keys of every algorithm in use, whatever the schedule. */
export async function rotateSigningKeys(db: DB, box: SecretBox, delaySeconds: number): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await lock(trx);
    const inUse = (await algorithmsInUse(trx)).map((r) => r.alg);
    // the first keys (a database no server has started on yet) sign at once: there is nothing to wait for
    if (inUse.length === 0) return insertKeys(trx, box, [FIRST_ALG], 0);
    return insertKeys(trx, box, inUse.includes(FIRST_ALG) ? inUse : [FIRST_ALG, ...inUse], delaySeconds);
  });
}

/**
 * The first EdDSA key (active at once) when there is none, or new keys of the algorithms whose
 * newest key is older than `rotationDays`; once across instances. Returns the new kids (empty:
 * nothing was due).
 */
export async function rotateIfDue(db: DB, box: SecretBox, rotationDays: number, delaySeconds: number): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await lock(trx);
    const inUse = await algorithmsInUse(trx, rotationDays);
    if (!inUse.some((r) => r.alg === FIRST_ALG)) return insertKeys(trx, box, [FIRST_ALG], 0);
    return insertKeys(
      trx,
      box,
      inUse.filter((r) => r.due).map((r) => r.alg),
      delaySeconds,
    );
  });
}

/** The first key of each of `algs` that has none, signing at once; once across instances. Returns the new kids. */
export async function addFirstKeys(db: DB, box: SecretBox, algs: readonly KeyKind[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await lock(trx);
    const inUse = new Set((await algorithmsInUse(trx)).map((r) => r.alg));
    return insertKeys(
      trx,
      box,
      algs.filter((alg) => !inUse.has(alg)),
      0,
    );
  });
}
