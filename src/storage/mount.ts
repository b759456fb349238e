/**
 * The storage module's own URLs, a mount (like `/mcp`) because they carry bytes the API pipeline
 * would buffer and JSON-decode:
 * - `PUT /api/storage/uploads/<token>` (the disk driver's upload URL): the body streamed to the
 *   key's file, at most the declared size, once per token (single-use), within 15 minutes;
 * - `GET /api/storage/links/<token>` (every driver's signed link): the disk driver's object
 *   streamed with its type, its disposition (`attachment` except for images), `nosniff` and a
 *   `sandbox` CSP; S3's, a 302 to a presigned GET (5 minutes).
 * Errors are the API's JSON shape; the store away is 503 with Retry-After.
 */
import type { Say } from '../http/app.js';
import { phrase } from '../i18n/messages.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { DiskDriver, UploadTooLarge } from './disk.js';
import type { StorageDriver } from './driver.js';
import type { FileService } from './service.js';
import type { StorageTokens } from './tokens.js';

export interface StorageMountDeps {
  db: DB;
  driver: StorageDriver;
  tokens: StorageTokens;
  files: FileService;
  log: Logger;
  headers: Record<string, string>;
  downloadTtlMs: number;
}

export const UPLOADS_PATH = '/api/storage/uploads';
export const LINKS_PATH = '/api/storage/links';

export class StorageMount {
  constructor(private readonly deps: StorageMountDeps) {}

  /** `say`: its refusals in the request's language */
  handle(req: IncomingMessage, res: ServerResponse, say: Say): void {
    for (const [name, value] of Object.entries(this.deps.headers)) res.setHeader(name, value);
    const path = (req.url ?? '/').split('?')[0]!;
    const answer = path.startsWith(`${UPLOADS_PATH}/`)
      ? this.upload(req, res, decodeURIComponent(path.slice(UPLOADS_PATH.length + 1)), say)
      : this.download(req, res, decodeURIComponent(path.slice(LINKS_PATH.length + 1)), say);
    answer.catch((err: Error) => {
      this.deps.log.warn('storage/failed', `A storage request failed: ${err.message}`, { method: req.method });
      if (!res.headersSent)
        this.json(res, 503, { type: 'service-unavailable', message: say('The file store cannot be reached; try again shortly') }, { 'retry-after': '5' });
      else res.destroy();
    });
  }

  private json(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
    res.statusCode = status;
    for (const [name, value] of Object.entries({ 'content-type': 'application/json; charset=utf-8', ...headers })) res.setHeader(name, value);
    res.end(JSON.stringify(body));
  }

  private async upload(req: IncomingMessage, res: ServerResponse, text: string, say: Say): Promise<void> {
    const { driver, tokens, db } = this.deps;
    if (req.method !== 'PUT' || !(driver instanceof DiskDriver))
      return this.json(res, 405, { type: 'method-not-allowed', message: say('An upload is a PUT') }, { allow: 'PUT' });
    const token = tokens.verify(text, 'upload');
    if (!token) return this.json(res, 403, { type: 'forbidden', message: say('The upload URL is not valid or has expired') });
    // single use: the first request to claim the token is the only one that writes
    const claimed = await db
      .updateTable('stored_file')
      .set({ upload_used: true })
      .where('key', '=', token.key)
      .where('status', '=', 'pending')
      .where('upload_used', '=', false)
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return this.json(res, 403, { type: 'forbidden', message: say('The upload URL was used already, or its upload is gone') });
    const declared = Number(req.headers['content-length']);
    if (declared > token.max) {
      req.resume();
      return this.json(res, 413, { type: 'payload-too-large', message: say(phrase('The upload holds at most {max} bytes', { max: token.max })) });
    }
    try {
      await driver.receive(token.key, req, token.max);
    } catch (err) {
      if (err instanceof UploadTooLarge) {
        req.resume();
        return this.json(res, 413, { type: 'payload-too-large', message: say(phrase('The upload holds at most {max} bytes', { max: token.max })) });
      }
      throw err;
    }
    res.statusCode = 204;
    res.end();
  }

  private async download(req: IncomingMessage, res: ServerResponse, text: string, say: Say): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return this.json(res, 405, { type: 'method-not-allowed', message: say('A link is read with GET') }, { allow: 'GET' });
    const token = this.deps.tokens.verify(text, 'download');
    if (!token) return this.json(res, 403, { type: 'forbidden', message: say('The link is not valid or has expired') });
    const served = await this.deps.files.served(token.file, token.variant);
    if (!served) return this.json(res, 404, { type: 'not-found', message: say('No such file') });
    const { driver } = this.deps;
    if (driver.downloadUrl) {
      const url = await driver.downloadUrl({ ...served, expiresAt: new Date(Date.now() + this.deps.downloadTtlMs) });
      res.statusCode = 302;
      res.setHeader('location', url);
      res.setHeader('cache-control', 'private, max-age=60');
      res.end();
      return;
    }
    const disk = driver as DiskDriver;
    const size = await disk.size(served.key);
    if (size === undefined) return this.json(res, 404, { type: 'not-found', message: say('No such file') });
    res.statusCode = 200;
    res.setHeader('content-type', served.contentType);
    res.setHeader('content-length', String(size));
    res.setHeader('content-disposition', served.disposition);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('content-security-policy', "sandbox; default-src 'none'");
    res.setHeader('cache-control', 'private, max-age=300');
    res.setHeader('cross-origin-resource-policy', 'same-origin');
    if (req.method === 'HEAD') return void res.end();
    await pipeline(disk.stream(served.key), res);
  }
}
