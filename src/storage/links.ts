/**
 * Signed links to stored files (docs/files.md, "Downloads"): `APP_URL/api/storage/links/<token>`,
 * made when an answer names a file, valid 5 minutes, so an `<img>` needs no token. The link
 * resolves on the server: the disk driver's object is streamed with `nosniff` and a `sandbox` CSP;
 * S3's is a 302 to a presigned GET naming the type and disposition (its bytes never pass here).
 */
import type { ImageLinks } from '../account/account-shaping.js';
import { RENDITION_WIDTHS } from './purposes.js';
import type { StorageTokens } from './tokens.js';

export class FileLinks {
  constructor(
    private readonly tokens: StorageTokens,
    /** `APP_URL/api/storage/links` */
    private readonly base: string,
    private readonly ttlMs: number,
  ) {}

  link(fileId: string, variant: 'original' | `${number}`): string {
    return `${this.base}/${this.tokens.sign({ kind: 'download', file: fileId, variant, exp: Math.floor((Date.now() + this.ttlMs) / 1000) })}`;
  }

  /** An image's links: the original and its renditions. */
  image(fileId: string): ImageLinks {
    const [small, large] = RENDITION_WIDTHS;
    return { id: fileId, url: this.link(fileId, 'original'), renditions: { '64': this.link(fileId, `${small}`), '256': this.link(fileId, `${large}`) } };
  }
}
