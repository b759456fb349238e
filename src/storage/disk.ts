/**
 * The disk driver (STORAGE=disk, the default): objects are files under STORAGE_DIR, named by key.
 * Uploads and downloads go through the server's own signed URLs (tokens.ts, disk-mount.ts); the
 * bytes are streamed to a temporary file and renamed into place when whole, never held in memory.
 * Several instances share it only when STORAGE_DIR is a shared volume; otherwise use S3.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StorageDriver, UploadRequest, UploadTarget } from './driver.js';
import type { StorageTokens } from './tokens.js';

/** Frees a chunk's memory now when nothing else can see it: it is the whole of its ArrayBuffer. */
function releaseIfSole(chunk: Buffer): void {
  // ES2024's ArrayBuffer.prototype.transfer (Node 24): the lib of tsconfig is older
  const buffer = chunk.buffer as ArrayBuffer & { detached?: boolean; transfer?(length: number): ArrayBuffer };
  if (chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength && buffer instanceof ArrayBuffer && !buffer.detached) buffer.transfer?.(0);
}

/** More bytes than the upload allows: what was written is removed. */
export class UploadTooLarge extends Error {}

const KEY = /^[a-z0-9/._-]{1,200}$/;

export class DiskDriver implements StorageDriver {
  readonly name = 'disk' as const;
  private readonly root: string;

  constructor(
    dir: string,
    private readonly tokens: StorageTokens,
    /** `APP_URL/api/storage/disk`: where the signed URLs point */
    private readonly base: string,
  ) {
    this.root = resolve(dir);
  }

  /** The file of a key: keys are the module's own, checked again so none leaves the directory. */
  private path(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new TypeError(`not a storage key: ${key}`);
    return join(this.root, key);
  }

  async uploadTarget({ key, maxBytes, expiresAt }: UploadRequest): Promise<UploadTarget> {
    const token = this.tokens.sign({ kind: 'upload', key, max: maxBytes, exp: Math.floor(expiresAt.getTime() / 1000) });
    return { method: 'PUT', url: `${this.base}/${token}`, fields: {} };
  }

  /**
   * Streams an upload's body to the key's file, at most `max` bytes (else UploadTooLarge, nothing
   * kept). Each chunk's memory is let go once it is on disk: a socket's read buffers are freed only
   * at a garbage collection, which external memory triggers late (a 45 MB body grew the RSS by
   * 25 MB; docs/performance.md), so a chunk that is the whole of its buffer is detached then.
   */
  async receive(key: string, body: Readable, max: number): Promise<number> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.partial-${process.pid}-${Date.now()}`;
    const file = await open(partial, 'wx');
    let size = 0;
    try {
      await pipeline(
        body,
        new Writable({
          highWaterMark: 64 * 1024,
          write(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            if (size > max) return done(new UploadTooLarge(`more than ${max} bytes`));
            file.write(chunk).then(() => {
              releaseIfSole(chunk);
              done();
            }, done);
          },
        }),
      );
      await file.close();
      await rename(partial, target);
      return size;
    } catch (err) {
      await file.close().catch(() => undefined);
      await rm(partial, { force: true });
      throw err;
    }
  }

  /** A readable stream of the object. */
  stream(key: string): Readable {
    return createReadStream(this.path(key));
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await stat(this.path(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async head(key: string, bytes: number): Promise<Buffer> {
    const handle = await open(this.path(key), 'r');
    try {
      const buffer = Buffer.alloc(bytes);
      const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  async write(key: string, body: Buffer): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(`${target}.partial`, body);
    await rename(`${target}.partial`, target);
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await stat(this.root);
  }
}
