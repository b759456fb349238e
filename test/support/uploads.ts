/**
 * Test support for files (docs/files.md): the bytes sent where an upload says, as the browser
 * sends them (the disk driver's PUT, S3's presigned form POST); an upload started, sent and
 * completed; and a real S3 API on loopback (`s3rver`) with the settings that point the system at it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { as, type TestAccount } from '../orgs/support.js';
import type { TestResponse } from './http.js';
import { freePort } from './net.js';
import type { TestSystem } from './system.js';

/** What `POST /api/uploads` answers: where the bytes go. */
export interface UploadTarget {
  'upload-id': string;
  method: 'POST' | 'PUT';
  url: string;
  fields: Record<string, string>;
}

/** Sends the bytes where the upload says, as the browser does; the store's status. */
export async function sendBytes(target: UploadTarget, body: Buffer, contentType: string): Promise<number> {
  if (target.method === 'PUT') return (await fetch(target.url, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': contentType } })).status;
  const form = new FormData();
  for (const [name, value] of Object.entries(target.fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(body)], { type: contentType }), 'upload');
  return (await fetch(target.url, { method: 'POST', body: form })).status;
}

/** The three steps of an upload: started (asserted 201), the bytes sent (asserted 204), and the completion's answer. */
export async function uploadAndComplete(
  t: TestSystem,
  who: TestAccount,
  input: { purpose: string; name: string; 'content-type': string; 'organization-id'?: string },
  body: Buffer,
): Promise<{ target: UploadTarget; completed: TestResponse }> {
  const started = await as(t, who, 'POST', '/api/uploads', { size: body.length, ...input });
  assert.equal(started.status, 201, started.text);
  const target = started.body as UploadTarget;
  assert.equal(await sendBytes(target, body, input['content-type']), 204);
  return { target, completed: await as(t, who, 'POST', `/api/uploads/${target['upload-id']}/complete`) };
}

export interface S3Server {
  /** the settings of the system's S3 driver */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** `s3rver` on loopback with one bucket, `files`, in a temporary directory. */
export async function startS3(): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const s3 = new S3rver({ port: await freePort(), address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: 'files', configs: [] }] });
  const { port } = await s3.run();
  return {
    env: {
      STORAGE: 's3',
      S3_BUCKET: 'files',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Polls (every 50 ms, at most 10 s) until `check` holds. */
export async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}
