/**
 * Compression of API answers (step 8 of the pipeline, src/http/pipeline.ts). Every API body is
 * a string by the time it is sent (the negotiated encoder made it), so it is compressed here in
 * one step, on the routes' own `onSend`, instead of by @fastify/compress's three hooks per
 * request (which still compress everything else: the page, static files, the OpenAPI document).
 * Most API answers are under the threshold (errors, health, `/me`) and leave after one length
 * check; measured in docs/performance.md ("Request cost, round 4").
 */
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { brotliCompress, brotliCompressSync, constants, deflate, deflateSync, gzip, gzipSync, type InputType } from 'node:zlib';

/** A body under this many bytes goes as it is: compressing it costs more than the bytes it saves. */
export const COMPRESS_THRESHOLD = 1024;
/** Bodies up to this many bytes are compressed on the event loop (well under a millisecond); larger ones in libuv's thread pool. */
export const COMPRESS_SYNC_LIMIT = 64 * 1024;

type Encoding = 'br' | 'gzip' | 'deflate';
type Compress = (input: InputType, done: (err: Error | null, out: Buffer) => void) => void;

// brotli's quality 4: @fastify/compress's choice, close to gzip's speed with smaller output
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
const SYNC: Record<Encoding, (input: InputType) => Buffer> = {
  br: (input) => brotliCompressSync(input, BROTLI),
  gzip: (input) => gzipSync(input),
  deflate: (input) => deflateSync(input),
};
const ASYNC: Record<Encoding, Compress> = {
  br: (input, done) => brotliCompress(input, BROTLI, done),
  gzip: (input, done) => gzip(input, done),
  deflate: (input, done) => deflate(input, done),
};

const ENCODINGS: Encoding[] = ['br', 'gzip', 'deflate'];

/** The encoding to answer in, from Accept-Encoding (`x-gzip` is gzip, RFC 9110 §8.4.1.3); undefined for none. */
export function negotiateEncoding(header: string | undefined): Encoding | undefined {
  if (!header) return undefined;
  // negotiated only for bodies worth compressing: no cache (whose keys a client would choose)
  return (negotiate(header.toLowerCase().replace(/\bx-gzip\b/g, 'gzip'), ENCODINGS) ?? undefined) as Encoding | undefined;
}

function addVary(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'accept-encoding');
  else if (!/\baccept-encoding\b/i.test(String(vary))) reply.header('vary', `${String(vary)}, accept-encoding`);
}

/** The API routes' `onSend`: compresses a body of at least {@link COMPRESS_THRESHOLD} bytes when the client takes an encoding. */
export function compressApiBody(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, value?: unknown) => void): void {
  // a string of n UTF-16 units is at most 3n UTF-8 bytes: short ones are not measured
  const size = typeof payload === 'string' && payload.length * 3 >= COMPRESS_THRESHOLD ? Buffer.byteLength(payload) : 0;
  const encoding =
    size >= COMPRESS_THRESHOLD && reply.getHeader('content-encoding') === undefined ? negotiateEncoding(request.headers['accept-encoding']) : undefined;
  if (encoding === undefined) {
    done(null, payload);
    return;
  }
  const finish = (compressed: Buffer) => {
    addVary(reply);
    reply.header('content-encoding', encoding);
    reply.header('content-length', String(compressed.length));
    done(null, compressed);
  };
  const text = payload as string;
  if (size <= COMPRESS_SYNC_LIMIT) finish(SYNC[encoding](text));
  else ASYNC[encoding](text, (err, compressed) => (err ? done(err) : finish(compressed)));
}
