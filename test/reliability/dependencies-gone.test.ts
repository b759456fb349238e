/**
 * The real process with its dependencies taken away while it runs (docs/deployment.md, "When a
 * dependency fails"): a private PostgreSQL and a private Redis stopped, the SMTP server refusing.
 * Requests that need the database answer 503 within DATABASE_TIMEOUT, liveness still answers and
 * readiness says not ready, the process idles (its retries back off: no loop on the CPU), its
 * resident memory stays bounded, and SIGTERM still ends it with 0 within SHUTDOWN_TIMEOUT and a few
 * seconds, with the mail it accepted still waiting in the outbox for a later start.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSeconds, get, residentMb, startChildServer, terminate, type ChildServer } from '../support/child-server.js';
import { freePort } from '../support/net.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { startRedis, stopRedis } from '../support/private-redis.js';

const DATABASE_TIMEOUT_S = 2;
const SHUTDOWN_TIMEOUT_S = 5;
const json = { 'content-type': 'application/json' };

describe('PostgreSQL and Redis stopped, SMTP refusing, in the running process', () => {
  let postgres: PrivatePostgres | undefined;
  let server: ChildServer | undefined;
  after(async () => {
    await server?.dispose();
    await postgres?.dispose();
  });

  it('answers 503 in bounded time, idles, keeps its memory, and stops on SIGTERM with 0', async (t) => {
    postgres = await PrivatePostgres.create();
    await postgres.start();
    const databaseUrl = await postgres.createDatabase('gone');
    const redisPort = await freePort();
    const redis = await startRedis(redisPort);
    // nothing listens there: every delivery attempt is refused
    const smtpPort = await freePort();
    server = await startChildServer({
      env: {
        DATABASE_URL: databaseUrl,
        DATABASE_TIMEOUT: String(DATABASE_TIMEOUT_S),
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        MAIL_URL: `smtp://127.0.0.1:${smtpPort}`,
        SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT_S),
      },
    });
    const pid = server.child.pid!;
    const signUp = (email: string) =>
      get(server!.port, '/api/account/sign-up', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email, password: 'correct horse battery staple' }),
        timeoutMs: (DATABASE_TIMEOUT_S + 5) * 1000,
      });

    // with the mail server refusing, a sign-up is answered at once: its message waits in the outbox
    assert.equal((await signUp(`gone-${Date.now()}@example.com`)).status, 201);
    const rssBefore = residentMb(pid);

    await stopRedis(redis);
    await postgres.stop();

    const whileGone = await signUp(`gone-later-${Date.now()}@example.com`);
    assert.equal(whileGone.status, 503, whileGone.body || whileGone.error);
    assert.equal((JSON.parse(whileGone.body) as { type: string }).type, 'service-unavailable');
    assert.equal((await get(server.port, '/api/health/live')).status, 200, 'the process is alive');
    assert.equal((await get(server.port, '/api/health/ready', { timeoutMs: 5_000 })).status, 503, 'and not ready');

    // the outbox, the webhook and billing workers, the listener and ioredis keep trying, backing off
    const cpuBefore = cpuSeconds(pid);
    await sleep(3_000);
    const idleCpu = cpuSeconds(pid) - cpuBefore;
    assert.ok(idleCpu < 0.6, `${idleCpu.toFixed(2)} s of CPU in 3 s with every dependency gone`);
    const growth = residentMb(pid) - rssBefore;
    t.diagnostic(`idle CPU ${idleCpu.toFixed(2)} s in 3 s, resident memory ${growth >= 0 ? '+' : ''}${growth.toFixed(0)} MB`);
    assert.ok(growth < 60, `resident memory grew ${growth.toFixed(0)} MB with every dependency gone`);

    assert.equal(await terminate(server, (SHUTDOWN_TIMEOUT_S + 5) * 1000), 0, 'SIGTERM ends it with 0');
  });
});
