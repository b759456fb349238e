/**
 * A failing log sink never hurts the server (docs/deployment.md, "When a dependency fails"): the
 * console whose reader is gone (EPIPE) or stops reading (a full pipe), a log file on a full disk
 * (/dev/full) or in a directory the process may not create. For each, on the real process: every
 * request is answered, idle CPU stays near zero, resident memory stays bounded, the failure is said
 * once (not per entry), what is dropped is counted in `saas_log_entries_dropped_total{sink}`, and
 * SIGTERM still ends the process with 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSeconds, get, load, residentMb, startChildServer, terminate, waitFor, type ChildServer } from '../support/child-server.js';
import { freePort } from '../support/net.js';
import { testDatabases } from '../support/system.js';

/** SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT + 5 s, at this file's settings (0 + 5 + 5) */
const STOP_WITHIN_MS = 10_000;
/**
 * The sinks are the subject, not the database: on PostgreSQL (a migrated copy, when
 * TEST_DATABASE_URL is set) a server starts without PGlite's initdb, ~3 s of CPU each.
 */
const postgres = testDatabases().find((d) => d.name === 'postgres');

const servers: ChildServer[] = [];
const databases: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(servers.map((s) => s.dispose()));
  await Promise.all(databases.map((drop) => drop()));
});

async function start(env: Record<string, string>, stdio: Array<'pipe' | 'ignore'>): Promise<ChildServer & { metricsPort: number }> {
  const metricsPort = await freePort();
  const database = await postgres?.create();
  if (database) databases.push(database.drop);
  const server = await startChildServer({
    env: { METRICS_PORT: String(metricsPort), SHUTDOWN_TIMEOUT: '5', ...(database ? { DATABASE_URL: database.url } : {}), ...env },
    stdio: stdio as never,
  });
  servers.push(server);
  return Object.assign(server, { metricsPort });
}

async function dropped(server: { metricsPort: number }, sink: string): Promise<number> {
  const metrics = (await get(server.metricsPort, '/metrics')).body;
  const m = new RegExp(`^saas_log_entries_dropped_total\\{sink="${sink}"\\} (\\d+)`, 'm').exec(metrics);
  assert.ok(m, `the metric for ${sink} is there`);
  return Number(m[1]);
}

/** The server's CPU seconds while it has nothing to do for `ms`. */
async function idleCpu(server: ChildServer, ms: number): Promise<number> {
  const before = cpuSeconds(server.child.pid!);
  await sleep(ms);
  return cpuSeconds(server.child.pid!) - before;
}

/** 2,000 answered requests, with resident memory before and after them. */
async function serveUnderFault(server: ChildServer): Promise<{ grewMb: number }> {
  await load(server.port, '/api/health', 200);
  const baseline = residentMb(server.child.pid!);
  const tally = await load(server.port, '/api/health', 2_000);
  assert.deepEqual([...tally], [[200, 2_000]], 'every request answered 200');
  return { grewMb: residentMb(server.child.pid!) - baseline };
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('a failing log sink never hurts the server', () => {
  it('console whose reader is gone (EPIPE): serves, idles, says it once on stderr, counts, stops on SIGTERM', async () => {
    const server = await start({ LOG_CONSOLE: 'json' }, ['ignore', 'pipe', 'pipe']);
    await waitFor(async () => (await dropped(server, 'console')) === 0, 5_000);
    server.child.stdout!.destroy();
    const { grewMb } = await serveUnderFault(server);
    assert.ok(grewMb < 64, `resident memory grew by ${grewMb.toFixed(0)} MB over 2,000 requests`);
    const cpu = await idleCpu(server, 2_000);
    assert.ok(cpu < 0.5, `${cpu} s of CPU in 2 s with nothing to serve`);
    assert.ok((await dropped(server, 'console')) >= 2_000, "each request's line is counted as dropped");
    assert.equal(count(server.stderr(), '"log/sink-failed"'), 1, `said once: ${server.stderr().slice(0, 1000)}`);
    assert.ok(server.stderr().split('\n').length < 10, 'no line per lost entry');
    assert.equal(await terminate(server, STOP_WITHIN_MS), 0);
  });

  it('console and standard error both gone, with a log file: the file keeps every entry and the notice', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-logs-'));
    const logFile = join(dir, 'saas-app.json');
    const withFile = await start({ LOG_CONSOLE: 'json', LOG_FILE: logFile }, ['ignore', 'pipe', 'pipe']);
    withFile.child.stdout!.destroy();
    withFile.child.stderr!.destroy();
    await serveUnderFault(withFile);
    assert.equal(await terminate(withFile, STOP_WITHIN_MS), 0);
    const entries = (await readFile(logFile, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; data: { sink?: string } });
    assert.ok(entries.filter((e) => e.id === 'api-call/response').length >= 2_200, 'the file has every request');
    assert.equal(entries.filter((e) => e.id === 'log/sink-failed').length, 1, JSON.stringify(entries.filter((e) => e.id.startsWith('log/'))));
    assert.equal(entries.find((e) => e.id === 'log/sink-failed')!.data.sink, 'console');
    await rm(dir, { recursive: true, force: true });
  });

  it('console whose reader stops reading (a full pipe): requests are answered, and it is written again once read', async () => {
    const server = await start({ LOG_CONSOLE: 'json' }, ['ignore', 'pipe', 'pipe']);
    let out = '';
    server.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    server.child.stdout!.pause();
    await serveUnderFault(server);
    const cpu = await idleCpu(server, 1_000);
    assert.ok(cpu < 0.5, `${cpu} s of CPU in 1 s while the pipe is full`);
    server.child.stdout!.resume();
    await load(server.port, '/api/health/live', 5);
    // every request's line is written once the pipe is read again, or was dropped and counted
    let accounted = '';
    await waitFor(async () => {
      const [written, lost] = [count(out, '"api-call/response"'), await dropped(server, 'console')];
      accounted = `${written} written and ${lost} dropped`;
      return written + lost >= 2_205;
    }, 15_000).catch(() => assert.fail(`${accounted}: not every request is accounted for`));
    assert.ok(out.endsWith('\n'));
    for (const line of out.split('\n').filter(Boolean)) JSON.parse(line);
    assert.equal(await terminate(server, STOP_WITHIN_MS), 0);
  });

  it('log file on a full disk (/dev/full), the only sink: serves, says it on stderr a bounded number of times, counts', async () => {
    const server = await start({ LOG_FILE: '/dev/full' }, ['ignore', 'ignore', 'pipe']);
    const { grewMb } = await serveUnderFault(server);
    assert.ok(grewMb < 64, `resident memory grew by ${grewMb.toFixed(0)} MB`);
    const cpu = await idleCpu(server, 2_000);
    assert.ok(cpu < 0.5, `${cpu} s of CPU in 2 s`);
    // lines queued while the file fails are counted as dropped when a retry (1 s doubling) fails too
    let lost = 0;
    await waitFor(async () => (lost = await dropped(server, 'file')) >= 2_000, 20_000).catch(() => assert.fail(`${lost} entries counted as dropped`));
    assert.equal(count(server.stderr(), '"log/sink-failed"'), 1, server.stderr().slice(0, 2000));
    assert.ok(server.stderr().split('\n').length < 10, 'no line per write');
    assert.equal(await terminate(server, STOP_WITHIN_MS), 0);
  });

  it('log file in a directory the process may not create: the console says it once, serving goes on', async () => {
    const server = await start({ LOG_CONSOLE: 'json', LOG_FILE: '/sys/fs/saas-test/saas-app.json' }, ['ignore', 'pipe', 'pipe']);
    let out = '';
    server.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    await serveUnderFault(server);
    await waitFor(() => count(out, '"api-call/response"') >= 2_200, 10_000);
    assert.equal(count(out, '"log/sink-failed"'), 1, 'said once on the console');
    assert.ok((await dropped(server, 'file')) >= 1);
    assert.equal(await terminate(server, STOP_WITHIN_MS), 0);
  });
});
