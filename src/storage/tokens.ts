/**
 * The disk driver's signed URLs: `<payload>.<signature>`, the payload base64url JSON, HMAC-SHA256
 * with a key derived from the server's secret (ENCRYPTION_KEY), compared in constant time. The disk
 * driver's upload token names one key and its size limit (single-use: the file row says it was
 * used); a link names a stored file and which of its objects. Both expire.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The disk driver's upload URL: one key, at most `max` bytes. */
export interface UploadToken {
  kind: 'upload';
  key: string;
  max: number;
  exp: number;
}

/** A signed link to a stored file (any driver): its id and which of its objects. */
export interface DownloadToken {
  kind: 'download';
  file: string;
  /** `original`, or a rendition's width */
  variant: string;
  exp: number;
}

export type StorageToken = UploadToken | DownloadToken;

export class StorageTokens {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'saas-storage', 'disk-urls', 32));
  }

  sign(token: StorageToken): string {
    const payload = Buffer.from(JSON.stringify(token)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The token, when the signature is this server's and it has not expired. */
  verify<K extends StorageToken['kind']>(text: string, kind: K, now = Date.now()): Extract<StorageToken, { kind: K }> | undefined {
    const dot = text.indexOf('.');
    if (dot < 1) return undefined;
    const payload = text.slice(0, dot);
    const given = Buffer.from(text.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const token = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as StorageToken;
      return token.kind === kind && typeof token.exp === 'number' && token.exp * 1000 > now ? (token as Extract<StorageToken, { kind: K }>) : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
