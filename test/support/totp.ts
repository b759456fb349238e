/** TOTP codes for tests, from the same library the server uses (otpauth). */
import { setTimeout as sleep } from 'node:timers/promises';
import { Secret, TOTP } from 'otpauth';

/** The code of the step `offset` steps from now. */
export function totpCode(secret: string, offset = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offset * 30_000 });
}

/**
 * Waits out the last 2 s of a 30 s step (at most once, bounded), so a code made now belongs to
 * the step the server checks it in: a code of step ±1 is accepted, ±2 is not.
 */
export async function awayFromStepEdge(): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 2_000) await sleep(left + 100);
}
