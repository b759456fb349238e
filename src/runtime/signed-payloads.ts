/**
 * Small signed, expiring payloads for URLs (a file's signed link, an upload URL, an unsubscribe
 * link): `<payload>.<mac>`, the payload base64url JSON with its expiry `exp` (Unix seconds),
 * HMAC-SHA256 with a key derived from the server's secret for one purpose (HKDF), compared in
 * constant time. Nothing is kept on the server; the payload is readable, never secret.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export class SignedPayloads<T extends { exp: number }> {
  private readonly key: Buffer;

  /** `purpose`: what the key signs; two purposes never accept each other's payloads */
  constructor(secret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'saas-signed-payloads', purpose, 32));
  }

  sign(payload: T): string {
    const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${encoded}.${this.mac(encoded)}`;
  }

  /** The payload, when the signature is this server's and `exp` has not passed; `accept` checks its shape. */
  verify(text: string, accept: (payload: Record<string, unknown>) => boolean, now = Date.now()): T | undefined {
    const dot = text.indexOf('.');
    if (dot < 1) return undefined;
    const encoded = text.slice(0, dot);
    const given = Buffer.from(text.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(encoded), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (payload === null || typeof payload !== 'object' || typeof payload.exp !== 'number' || payload.exp * 1000 <= now || !accept(payload)) return undefined;
      return payload as T;
    } catch {
      return undefined;
    }
  }

  private mac(encoded: string): string {
    return createHmac('sha256', this.key).update(encoded).digest('base64url');
  }
}
