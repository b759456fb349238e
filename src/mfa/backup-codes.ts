/**
 * Backup codes: ten single-use recovery codes per account, for a lost authenticator app.
 * Each is 10 characters of Crockford's base32 (50 random bits), shown as `xxxxx-xxxxx`, kept
 * only as a keyed hash (HMAC with a key derived from ENCRYPTION_KEY): a leaked table cannot be
 * tested offline without the key, and online guesses meet the second-factor limits.
 */
import { randomBytes } from 'node:crypto';

export const BACKUP_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 10;

/** Fresh codes, formatted for the user. */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(LENGTH);
    let code = '';
    // 256 is a multiple of 32: `& 31` picks every character with the same chance
    for (const b of bytes) code += ALPHABET[b & 31];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/**
 * The canonical form that is hashed: lower case, separators and spaces gone, and the letters
 * Crockford's alphabet leaves out read as the digits they look like (o -> 0, i and l -> 1).
 */
export function normalizeBackupCode(input: string): string {
  return input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
}
