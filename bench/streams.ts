/**
 * 1,000 open notification streams on one instance (docs/notifications.md): the compiled server on a
 * PGlite directory, one person whose 1,000 streams (NOTIFICATION_STREAMS_PER_ACCOUNT raised for
 * it) are opened with `fetch` as the client opens its one; the server's RSS settled before and
 * after they are open gives the memory per stream; then one notification is caused (an app
 * connected to the account: `mcpToken` allows one) and the time until every stream has it is the
 * fan-out figure. Targets: at most 20 KB of RSS a stream, all reached within a second.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type ClientRequest, request } from 'node:http';
import { procStatusMb } from './measure.js';
import { mcpToken } from './mcp-token.js';
import { signedInServer } from './signed-in-server.js';

export const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
export const STREAM_RSS_MAX_KB = 20;
export const STREAM_FANOUT_MAX_MS = 1000;

export interface StreamsFootprint {
  streams: number;
  'rss-before-mb': number | null;
  'rss-open-mb': number | null;
  'kb-per-stream': number | null;
  'fanout-ms': number;
  reached: number;
}

export async function streamsFootprint(tmp: string, script = 'dist/server.js'): Promise<StreamsFootprint> {
  const { server, token, stop } = await signedInServer(tmp, 'streams', { NOTIFICATION_STREAMS_PER_ACCOUNT: String(STREAMS) }, script);
  // one connection per stream, as 1,000 browsers would hold
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const requests: ClientRequest[] = [];
  try {
    await sleep(2000);
    const before = await procStatusMb(server.pid, 'VmRSS');
    let reached = 0;
    let allReached: () => void = () => undefined;
    const everyone = new Promise<void>((resolve) => (allReached = resolve));
    const opened: Array<Promise<void>> = [];
    const target = new URL(`${server.url}/api/notifications/stream`);
    for (let i = 0; i < STREAMS; i++) {
      opened.push(
        new Promise<void>((resolve, reject) => {
          const req = request(
            { host: target.hostname, port: target.port, path: target.pathname, headers: { authorization: `Bearer ${token}` }, agent },
            (res) => {
              if (res.statusCode !== 200) return reject(new Error(`bench: a stream answered ${res.statusCode}`));
              let seen = '';
              // the first `event: notification` counts this stream reached
              const onData = (chunk: Buffer) => {
                seen = (seen + chunk.toString('utf8')).slice(-4096);
                if (seen.includes('event: notification')) {
                  res.off('data', onData);
                  if (++reached === STREAMS) allReached();
                }
              };
              res.on('data', onData);
              resolve();
            },
          );
          req.on('error', reject);
          requests.push(req);
          req.end();
        }),
      );
    }
    await Promise.all(opened);
    // the opening's garbage (a transaction and a token check a stream) is collected while idle
    await sleep(Number(process.env.BENCH_STREAMS_SETTLE_MS ?? 5000));
    const open = await procStatusMb(server.pid, 'VmRSS');
    const t0 = performance.now();
    await mcpToken(server.url, token, 'account:read');
    await Promise.race([everyone, sleep(10_000)]);
    const fanoutMs = Math.round(performance.now() - t0);
    return {
      streams: STREAMS,
      'rss-before-mb': before,
      'rss-open-mb': open,
      'kb-per-stream': before === null || open === null ? null : Math.round(((open - before) * 1024 * 10) / STREAMS) / 10,
      'fanout-ms': fanoutMs,
      reached,
    };
  } finally {
    for (const req of requests) req.destroy();
    agent.destroy();
    await stop();
  }
}
