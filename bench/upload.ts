/**
 * A 25 MB upload to the disk driver (docs/files.md): the compiled server on a PGlite directory with
 * the disk store, a person signed up, a 25 MB upload started (`FILE_IMAGE_MAX_BYTES` raised so the
 * avatar purpose takes it) and its bytes PUT to the server's signed URL in 64 KB chunks. The
 * server's resident memory is sampled every 50 ms from before the PUT to its answer: the growth
 * of its peak over its settled RSS before is the figure. Target: at most 10 MB (the body is
 * streamed to a file, never held).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { procStatusMb } from './measure.js';
import { json, signedInServer } from './signed-in-server.js';

export const UPLOAD_BYTES = Number(process.env.BENCH_UPLOAD_MB ?? 25) * 1024 * 1024;
/** the RSS an upload may add */
export const UPLOAD_RSS_GROWTH_MAX_MB = 10;

export interface UploadFootprint {
  bytes: number;
  'rss-before-mb': number | null;
  'peak-rss-during-mb': number | null;
  'growth-mb': number | null;
  seconds: number;
}

export async function uploadFootprint(tmp: string, script = 'dist/server.js'): Promise<UploadFootprint> {
  const { server, token, stop } = await signedInServer(tmp, 'upload', { FILE_IMAGE_MAX_BYTES: String(UPLOAD_BYTES) }, script);
  try {
    const started = await json(
      await fetch(`${server.url}/api/uploads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ purpose: 'avatar', name: 'big.png', 'content-type': 'image/png', size: UPLOAD_BYTES }),
      }),
    );
    await sleep(2000);
    const before = await procStatusMb(server.pid, 'VmRSS');
    let peak = before ?? 0;
    const sampler = setInterval(() => {
      void procStatusMb(server.pid, 'VmRSS').then((mb) => {
        peak = Math.max(peak, mb ?? 0);
      });
    }, 50);
    const chunk = randomBytes(64 * 1024);
    const chunks = UPLOAD_BYTES / chunk.length;
    const body = Readable.from(
      (function* stream() {
        for (let i = 0; i < chunks; i++) yield chunk;
      })(),
    );
    const t0 = performance.now();
    const res = await fetch(String(started.url), {
      method: 'PUT',
      body: Readable.toWeb(body) as ReadableStream,
      headers: { 'content-type': 'image/png', 'content-length': String(UPLOAD_BYTES) },
      duplex: 'half',
    } as RequestInit);
    await res.arrayBuffer();
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    if (res.status !== 204) throw new Error(`bench: the upload's PUT answered ${res.status}`);
    const last = await procStatusMb(server.pid, 'VmRSS');
    peak = Math.max(peak, last ?? 0);
    return {
      bytes: UPLOAD_BYTES,
      'rss-before-mb': before,
      'peak-rss-during-mb': peak,
      'growth-mb': before === null ? null : Math.round((peak - before) * 10) / 10,
      seconds: Math.round(seconds * 100) / 100,
    };
  } finally {
    await stop();
  }
}
