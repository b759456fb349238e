/**
 * The API key's text: `sk_<prefix>_<secret><checksum>`, in base62 (letters and digits: one word
 * for a double click, nothing to escape in a URL, a header or a shell).
 * - `prefix`, 8 characters: not secret; shown in lists and logs to tell keys apart.
 * - `secret`, 32 characters: 190 random bits (32 × log2 62), well over the 128 needed.
 * - `checksum`, 6 characters: the CRC-32 of everything before it. It proves nothing (anyone can
 *   compute it); it lets a typo, a truncated paste or random junk be refused without a database
 *   lookup, and lets secret scanners (GitHub's, say) recognise a real key.
 * Stored: the SHA-256 of the whole key, hex. A fast hash is right for a secret this long: slow
 * hashes (argon2, bcrypt) protect low-entropy passwords from offline guessing, and nobody guesses
 * 190 bits; argon2 per request would only make every key request slow and expensive to flood.
 */
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const PREFIX_LENGTH = 8;
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_SHAPE = new RegExp(`^sk_([0-9A-Za-z]{${PREFIX_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
/** the length of every key: `sk_` + prefix + `_` + secret + checksum */
export const API_KEY_LENGTH = 3 + PREFIX_LENGTH + 1 + SECRET_LENGTH + CHECKSUM_LENGTH;

/** `length` characters of base62, uniformly random (bytes of 248 and above are dropped: 248 = 4 × 62). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A number in base62, padded to `width` characters. */
function base62(value: number, width: number): string {
  let out = '';
  for (let n = value; n > 0; n = Math.floor(n / 62)) out = ALPHABET[n % 62] + out;
  return out.padStart(width, '0');
}

const checksumOf = (body: string) => base62(crc32(body), CHECKSUM_LENGTH);

/** SHA-256 of the whole key, hex: what is stored and looked up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface NewApiKey {
  /** shown once, to its creator */
  key: string;
  prefix: string;
  hash: string;
}

export function newApiKey(): NewApiKey {
  const prefix = randomBase62(PREFIX_LENGTH);
  const body = `sk_${prefix}_${randomBase62(SECRET_LENGTH)}`;
  const key = body + checksumOf(body);
  return { key, prefix, hash: hashApiKey(key) };
}

/** The prefix and hash of a well-formed key with a right checksum; undefined for anything else. */
export function parseApiKey(text: string): { prefix: string; hash: string } | undefined {
  if (text.length !== API_KEY_LENGTH) return undefined;
  const m = KEY_SHAPE.exec(text);
  if (!m || checksumOf(text.slice(0, -CHECKSUM_LENGTH)) !== m[3]) return undefined;
  return { prefix: m[1], hash: hashApiKey(text) };
}
