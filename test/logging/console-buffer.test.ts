/**
 * Console JSON lines are gathered and written together (a system call per write, not per
 * entry), and none is lost however the process ends short of SIGKILL: SIGTERM with or without
 * a shutdown of its own, process.exit, an uncaught exception; a fatal entry is written at once.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConsoleHandler, defaultMaxWriteBytes } from '../../src/logging/console-handler.js';
import type { LogEntry } from '../../src/logging/logger.js';

const FIXTURE = new URL('./fixtures/console-child.ts', import.meta.url).pathname;

function entry(i: number, level: LogEntry['level'] = 'info', size = 100): LogEntry {
  return {
    timestamp: '2026-11-22T10:11:12.345Z',
    level,
    id: 'test/line',
    msg: `line ${i}`,
    ns: 'saas.test',
    line: 1,
    data: { i, pad: 'x'.repeat(size) },
    ctx: {},
  };
}

/** a stream that records each write */
function recorder(): { writes: string[]; stream: NodeJS.WritableStream } {
  const writes: string[] = [];
  return { writes, stream: { write: (s: string) => writes.push(s) } as unknown as NodeJS.WritableStream };
}

/**
 * Runs the fixture; returns the JSON entries on its standard output, its exit code and signal.
 * Its output is read only after a while: the pipe fills (64 KiB), as it does behind a slow reader.
 */
async function run(
  how: string,
  count: number,
): Promise<{ entries: Array<{ id: string; data: { i?: number } }>; code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, how, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  void sleep(300).then(() =>
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    }),
  );
  const exited = once(child, 'close') as Promise<[number | null, string | null]>;
  if (how === 'sigterm' || how === 'shutdown') {
    while (!stderr.includes('logged\n')) {
      if (child.exitCode !== null) break;
      await sleep(20);
    }
    child.kill('SIGTERM');
  }
  const [code, signal] = await exited;
  assert.ok(out === '' || out.endsWith('\n'), 'whole lines only');
  return {
    entries: out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    code,
    signal,
    stderr,
  };
}

describe('buffered console output', () => {
  it("writes at most 4 KiB at a time in a cluster worker (a pipe's atomic size), 64 KiB in a process writing alone", () => {
    assert.equal(defaultMaxWriteBytes(true), 4096);
    assert.equal(defaultMaxWriteBytes(false), 65536);
    assert.equal(defaultMaxWriteBytes(), 65536, 'the test runs outside a cluster');
  });

  it('gathers whole lines into writes of at most maxWriteBytes, and writes on flush', async () => {
    const { writes, stream } = recorder();
    const handler = new ConsoleHandler('json', stream, { buffered: true, flushIntervalMs: 60_000, maxWriteBytes: 4096 });
    for (let i = 0; i < 200; i++) handler.write(entry(i, 'info', i % 250), 'log');
    assert.ok(writes.length > 0 && writes.length < 200 / 4, `${writes.length} writes for 200 entries`);
    await handler.flush();
    const lines = writes
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogEntry);
    assert.deepEqual(
      lines.map((l) => l.data.i),
      Array.from({ length: 200 }, (_, i) => i),
    );
    for (const w of writes) {
      assert.ok(Buffer.byteLength(w) <= 4096, `a write of ${Buffer.byteLength(w)} bytes`);
      assert.ok(w.endsWith('\n'));
    }
    await handler.close();
  });

  it('writes a line longer than a write alone, and a fatal entry at once', async () => {
    const { writes, stream } = recorder();
    const handler = new ConsoleHandler('json', stream, { buffered: true, flushIntervalMs: 60_000, maxWriteBytes: 4096 });
    handler.write(entry(0), 'log');
    handler.write(entry(1, 'info', 10_000), 'log');
    assert.equal(writes.length, 1, 'the gathered line goes first, the long one waits for the next');
    handler.write(entry(2, 'fatal'), 'log');
    assert.equal(writes.length, 3, 'a fatal entry writes what is gathered, then itself');
    assert.deepEqual(
      writes
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as LogEntry).data.i),
      [0, 1, 2],
    );
    await handler.close();
  });

  it('writes gathered lines after the interval without any further entry', async () => {
    const { writes, stream } = recorder();
    const handler = new ConsoleHandler('json', stream, { buffered: true, flushIntervalMs: 10 });
    handler.write(entry(0), 'log');
    assert.equal(writes.length, 0);
    for (let i = 0; i < 500 && writes.length === 0; i++) await sleep(10);
    assert.equal(writes.length, 1);
    await handler.close();
  });

  it('writes each entry at once for a stream of its own (not the process output), and for the pretty format', () => {
    const own = recorder();
    new ConsoleHandler('json', own.stream).write(entry(0), 'log');
    assert.equal(own.writes.length, 1);
    const pretty = recorder();
    new ConsoleHandler('pretty', pretty.stream, { buffered: true }).write(entry(0), 'log');
    assert.equal(pretty.writes.length, 1);
  });

  it('writes every line when the process gets SIGTERM and nothing else listens, and still dies of the signal', async () => {
    const r = await run('sigterm', 1000);
    assert.equal(r.signal, 'SIGTERM', r.stderr);
    assert.deepEqual(
      r.entries.map((e) => e.data.i),
      Array.from({ length: 1000 }, (_, i) => i),
    );
  });

  it('writes every line when a SIGTERM shutdown closes the logs, the ones logged while stopping included', async () => {
    const r = await run('shutdown', 1000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.entries.length, 1001);
    assert.equal(r.entries.at(-1)!.id, 'fixture/stopping');
  });

  it('writes every line on process.exit', async () => {
    const r = await run('exit', 1000);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.entries.length, 1000);
  });

  it('writes every line when an uncaught exception ends the process', async () => {
    const r = await run('crash', 1000);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /escaped/);
    assert.equal(r.entries.length, 1000);
  });

  it('has written everything up to a fatal entry before the process can be killed outright', async () => {
    const r = await run('fatal', 1000);
    assert.equal(r.signal, 'SIGKILL');
    assert.equal(r.entries.length, 1001);
    assert.equal(r.entries.at(-1)!.id, 'fixture/fatal');
  });
});
