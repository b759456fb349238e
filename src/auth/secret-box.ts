/**
 * Secrets the server must read back later (TOTP secrets), sealed before they reach the
 * database: AES-256-GCM with a key derived (HKDF-SHA-256) from ENCRYPTION_KEY and a purpose,
 * the owner's id as associated data, so a sealed value copied to another row does not open.
 * A database dump alone reveals none of them. Keyed hashes of the same key protect values the
 * server only compares (backup codes).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  /** `purpose` separates the keys of different uses of one ENCRYPTION_KEY */
  constructor(secret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'saas-secret-box', purpose, 32));
  }

  /** `iv | tag | ciphertext`, base64url; `owner` must be given again to open it */
  seal(plain: string, owner: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Throws when the value was not sealed by this key for this owner. */
  open(sealed: string, owner: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(owner, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      // OpenSSL's own words ("unable to authenticate data") do not tell an operator what to check
      throw new Error(
        'A secret kept in the database cannot be opened: it was sealed with another ENCRYPTION_KEY (or, without one, another JWT_SECRET), or changed',
      );
    }
  }

  /** HMAC-SHA-256 of `value` under this box's key, hex: a hash no one without the key can test guesses against */
  hash(value: string): string {
    return createHmac('sha256', this.key).update(value, 'utf8').digest('hex');
  }
}
