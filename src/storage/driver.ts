/**
 * What the storage module asks of a store (docs/files.md, "Drivers"): the disk driver (disk.ts) and
 * the S3 one (s3.ts) answer the same questions. Keys are the module's own (`files/<uuid>`), never a
 * name a person chose.
 */

/** Where and how the browser sends an upload's bytes. */
export interface UploadTarget {
  method: 'POST' | 'PUT';
  url: string;
  /** a POST's form fields, sent before the file (S3's presigned POST); none for a PUT */
  fields: Record<string, string>;
}

export interface UploadRequest {
  key: string;
  contentType: string;
  /** the most the upload may hold: the declared size */
  maxBytes: number;
  expiresAt: Date;
}

export interface DownloadRequest {
  key: string;
  contentType: string;
  /** `inline` (an image) or `attachment; filename=…` */
  disposition: string;
  expiresAt: Date;
}

/** The store is unreachable: a request gets 503 with Retry-After, nothing half-written. */
export class StoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`the file store cannot be reached: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

export interface StorageDriver {
  readonly name: 'disk' | 's3';
  uploadTarget(request: UploadRequest): Promise<UploadTarget>;
  /** the stored object's size, or undefined when nothing is stored under the key */
  size(key: string): Promise<number | undefined>;
  /** the first `bytes` bytes of the object */
  head(key: string, bytes: number): Promise<Buffer>;
  /** the whole object (an image being made into renditions: bounded by its purpose's limit) */
  read(key: string): Promise<Buffer>;
  write(key: string, body: Buffer, contentType: string): Promise<void>;
  /** deletes the object; one that is not there is deleted already */
  remove(key: string): Promise<void>;
  /** a URL of the store itself serving the object (S3's presigned GET); none: the server streams it (disk) */
  downloadUrl?(request: DownloadRequest): Promise<string>;
  /** resolves when the store answers (readiness) */
  ping(): Promise<void>;
}
