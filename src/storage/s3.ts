/**
 * The S3 driver (STORAGE=s3): AWS S3, R2, MinIO or any S3-compatible store, through the official
 * `@aws-sdk/client-s3`. The browser uploads straight to the bucket with a presigned POST whose
 * policy fixes the key, the Content-Type and a content-length-range up to the declared size, and
 * downloads with a presigned GET naming the response's type and disposition: no byte passes
 * through the server. One bucket serves every instance.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { DownloadRequest, StorageDriver, UploadRequest, UploadTarget } from './driver.js';
import type { S3Settings } from './settings.js';

const secondsUntil = (at: Date) => Math.max(1, Math.floor((at.getTime() - Date.now()) / 1000));

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

export class S3Driver implements StorageDriver {
  readonly name = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
        : {}),
      // a store that is away fails a request in seconds, never holds it
      requestHandler: { connectionTimeout: 3000, requestTimeout: 10_000 },
      maxAttempts: 2,
    });
  }

  async uploadTarget({ key, contentType, maxBytes, expiresAt }: UploadRequest): Promise<UploadTarget> {
    const { url, fields } = await createPresignedPost(this.client, {
      Bucket: this.settings.bucket,
      Key: key,
      Conditions: [
        ['eq', '$Content-Type', contentType],
        ['content-length-range', 1, maxBytes],
      ],
      Fields: { 'Content-Type': contentType },
      Expires: secondsUntil(expiresAt),
    });
    return { method: 'POST', url, fields };
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async head(key: string, bytes: number): Promise<Buffer> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key, Range: `bytes=0-${bytes - 1}` }));
    return Buffer.from(await object.Body!.transformToByteArray());
  }

  async read(key: string): Promise<Buffer> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
    return Buffer.from(await object.Body!.transformToByteArray());
  }

  async write(key: string, body: Buffer, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
  }

  downloadUrl({ key, contentType, disposition, expiresAt }: DownloadRequest): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({ Bucket: this.settings.bucket, Key: key, ResponseContentType: contentType, ResponseContentDisposition: disposition }),
      { expiresIn: secondsUntil(expiresAt) },
    );
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
  }

  destroy(): void {
    this.client.destroy();
  }
}
