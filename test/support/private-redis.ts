/** A redis-server of the test's own, to stop and start (never the machine's shared one). */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { waitFor } from './child-server.js';

/** A redis-server of the test's own on `port`, keeping nothing on disk; resolves once it answers PING. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // refused while the server starts: the connect() below says so; nothing to print
  probe.on('error', () => undefined);
  await waitFor(async () => {
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      probe.disconnect();
      return false;
    }
  }, 10_000);
  probe.disconnect();
  return child;
}

/** Kills it at once (an outage, not a shutdown). */
export async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}
