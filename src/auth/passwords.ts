/**
 * Password hashing with argon2id at OWASP's parameters (m = 19 MiB, t = 2, p = 1). The
 * native library hashes on libuv's thread pool, so a burst of log-ins does not stall the
 * event loop. Passwords are hashed whole: no truncation at any length the API accepts.
 */
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';

const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return hash(password, OPTIONS);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /**
   * Spends the same work as a real verification and fails: used for unknown emails, so the
   * answer's timing does not tell which emails have accounts.
   */
  async verifyNothing(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(32).toString('base64url'));
    await this.verify(await this.dummy, password);
    return false;
  }
}
