/**
 * The storage module's signed URLs (src/runtime/signed-payloads.ts, key from ENCRYPTION_KEY): the
 * disk driver's upload token names one key and its size limit (single-use: the file row says it
 * was used); a link names a stored file and which of its objects. Both expire.
 */
import { SignedPayloads } from '../runtime/signed-payloads.js';

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
  private readonly payloads: SignedPayloads<StorageToken>;

  constructor(secret: string) {
    this.payloads = new SignedPayloads(secret, 'storage-urls');
  }

  sign(token: StorageToken): string {
    return this.payloads.sign(token);
  }

  /** The token, when the signature is this server's, it is of `kind` and has not expired. */
  verify<K extends StorageToken['kind']>(text: string, kind: K, now = Date.now()): Extract<StorageToken, { kind: K }> | undefined {
    return this.payloads.verify(text, (p) => p.kind === kind, now) as Extract<StorageToken, { kind: K }> | undefined;
  }
}
