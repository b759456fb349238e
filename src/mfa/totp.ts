/**
 * TOTP (RFC 6238) with the `otpauth` library: SHA-1, 6 digits, 30-second steps, what every
 * authenticator app supports; a code is accepted one step either side of now (clock drift).
 * Verification answers the time step the code belongs to, so the caller can refuse a code whose
 * step was already used (a replayed code, within its window).
 */
import { generate } from 'lean-qr';
import { toPngDataURL } from 'lean-qr/extras/node_export';
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/** steps either side of now that are accepted */
export const TOTP_WINDOW = 1;

/** A fresh random secret (160 bits, RFC 4226's recommendation), base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, issuer = '', label = 'OTPAuth'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD, secret: Secret.fromBase32(secret) });
}

/** The `otpauth://totp/...` URI authenticator apps read (usually from a QR code). */
export function otpauthUrl(secret: string, issuer: string, accountName: string): string {
  return totp(secret, issuer, accountName).toString();
}

/**
 * The URI as a QR code, a PNG data URL (5 pixels a module, the quiet zone around it): drawn
 * here rather than in the browser, which saves the client the encoder (about 3 KB gzipped).
 */
export function otpauthQrCode(url: string): string {
  return toPngDataURL(generate(url), { scale: 5, pad: 4 });
}

/** The time step of `code` when it is right within the window around `now`; undefined otherwise. */
export function totpStep(secret: string, code: string, now = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const t = totp(secret);
  const delta = t.validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? undefined : t.counter({ timestamp: now }) + delta;
}
