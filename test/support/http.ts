/** A small HTTP client for tests: real requests over the loopback, no automatic decompression. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gunzipSync, brotliDecompressSync, inflateSync } from 'node:zlib';
import { edn, json, transitJson, type Format } from '../../src/http/formats.js';

export const FORMAT_BY_NAME: Record<'json' | 'edn' | 'transit', Format> = { json, edn, transit: transitJson };
export const ALL_FORMATS = Object.values(FORMAT_BY_NAME);

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** the bytes as received (compressed if the server compressed them) */
  raw: Buffer;
  text: string;
  /** the body decoded by its Content-Type (JSON, EDN or Transit), or undefined */
  body: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** encoded with `format` (default JSON) unless a string or Buffer */
  body?: unknown;
  /** request and response format */
  format?: Format;
  /** a connection of its own instead of a pooled keep-alive one */
  freshConnection?: boolean;
  /** rejects when no answer came within this many ms (a test of a bounded answer) */
  timeoutMs?: number;
}

export type TestClient = (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>;

function decompress(raw: Buffer, encoding: string | undefined): Buffer {
  switch (encoding) {
    case 'gzip':
      return gunzipSync(raw);
    case 'br':
      return brotliDecompressSync(raw);
    case 'deflate':
      return inflateSync(raw);
    default:
      return raw;
  }
}

export function decodeBody(text: string, contentType: string | undefined): any {
  const mime = (contentType ?? '').split(';')[0].trim();
  const format = ALL_FORMATS.find((f) => f.mime === mime);
  if (text === '') return undefined;
  // another `+json` media type (application/scim+json; Transit's is one of ours) is JSON by its structured syntax suffix (RFC 6839)
  if (!format) return mime.endsWith('+json') ? JSON.parse(text) : undefined;
  return format.decode(text);
}

/** A client of `baseUrl`; an https one trusts `ca` (a test's own certificate authority, as a TLS proxy's). */
export function makeClient(baseUrl: string, ca?: string): TestClient {
  return (method, path, options = {}) =>
    new Promise((resolve, reject) => {
      const format = options.format ?? json;
      const headers: Record<string, string> = { accept: format.mime, ...options.headers };
      let payload: Buffer | undefined;
      if (options.body !== undefined) {
        payload = Buffer.isBuffer(options.body) ? options.body : Buffer.from(typeof options.body === 'string' ? options.body : format.encode(options.body));
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = format.mime;
        // framed: Node's client sends a GET or DELETE body unframed (no chunking by default), and the
        // server then reads those bytes as the start of a next request
        if (!Object.keys(headers).some((h) => ['content-length', 'transfer-encoding'].includes(h.toLowerCase()))) {
          headers['content-length'] = String(payload.length);
        }
      }
      const url = new URL(path, baseUrl);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method, headers, ...(ca ? { ca } : {}), ...(options.freshConnection ? { agent: false } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = decompress(raw, res.headers['content-encoding'] as string | undefined).toString('utf8');
          let body: unknown;
          try {
            body = decodeBody(text, res.headers['content-type']);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, text, body });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (options.timeoutMs !== undefined)
        req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`no answer to ${method} ${path} within ${options.timeoutMs} ms`)));
      req.end(payload);
    });
}
