import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { RotatingFileHandler } from '../../src/logging/file-handler.js';
import { archivePath, intervalStart } from '../../src/logging/log-archives.js';

async function allLines(dir: string): Promise<string[]> {
  const lines: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const raw = await readFile(join(dir, name));
    const text = name.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${name} ends with a whole line`);
    lines.push(...text.split('\n').filter(Boolean));
  }
  return lines;
}

describe('interval starts', () => {
  it('are UTC days, Mondays and first days of months', () => {
    const d = new Date('2026-11-22T23:59:59.999Z'); // a Sunday
    assert.equal(intervalStart(d, 'daily'), '2026-11-22');
    assert.equal(intervalStart(d, 'weekly'), '2026-11-16');
    assert.equal(intervalStart(new Date('2026-11-16T00:00:00Z'), 'weekly'), '2026-11-16');
    assert.equal(intervalStart(d, 'monthly'), '2026-11-01');
    assert.equal(archivePath('logs/saas-app.json', '2026-11-16', 'weekly', 3), 'logs/saas-app.json-2026-11-16w.3.gz');
  });
});

describe('rotating JSON file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rot-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('loses no line written while it closes or after it closed (requests finishing during shutdown)', async () => {
    const sub = join(dir, 'closing');
    const path = join(sub, 'saas-app.json');
    const handler = new RotatingFileHandler({ path, interval: 'daily', maxFileSize: 1e6, maxNumParts: 3, maxNumIntervals: 3 });
    for (let i = 0; i < 50; i++) handler.writeLine(JSON.stringify({ phase: 'before', i }));
    const closing = handler.close();
    // lines from code that runs while the file is being closed: microtasks, then the next turns
    for (let i = 0; i < 5; i++) {
      await Promise.resolve();
      handler.writeLine(JSON.stringify({ phase: 'closing', i }));
      await new Promise((r) => setImmediate(r));
      handler.writeLine(JSON.stringify({ phase: 'closing-later', i }));
    }
    await closing;
    handler.writeLine(JSON.stringify({ phase: 'after', i: 0 }));
    const lines = (await allLines(sub)).map((l) => JSON.parse(l) as { phase: string; i: number });
    assert.equal(lines.length, 50 + 10 + 1);
    assert.deepEqual(
      lines.slice(0, 50).map((l) => l.i),
      [...Array(50).keys()],
      'the queued lines first, in order',
    );
    assert.equal(lines.at(-1)!.phase, 'after');
  });

  it('rotates by size into numbered gzipped parts, keeps max-num-parts, and loses or tears no line under concurrent writes', async () => {
    const sub = join(dir, 'size');
    const path = join(sub, 'saas-app.json');
    const now = new Date('2026-11-22T10:00:00Z');
    const handler = new RotatingFileHandler({ path, interval: 'daily', maxFileSize: 2000, maxNumParts: 1000, maxNumIntervals: 30, clock: () => now });
    const total = 3000;
    // writes from many concurrent async tasks, interleaved with the drain loop
    await Promise.all(
      Array.from({ length: 30 }, async (_, task) => {
        for (let i = 0; i < total / 30; i++) {
          handler.writeLine(JSON.stringify({ task, i, pad: 'x'.repeat(i % 40) }));
          if (i % 7 === 0) await new Promise((r) => setImmediate(r));
        }
      }),
    );
    await handler.close();
    const names = await readdir(sub);
    assert.ok(names.includes('saas-app.json'));
    assert.ok(names.filter((n) => /^saas-app\.json-2026-11-22d\.\d+\.gz$/.test(n)).length > 10);
    const lines = await allLines(sub);
    assert.equal(lines.length, total);
    const seen = new Set(
      lines.map((l) => {
        const o = JSON.parse(l);
        return `${o.task}:${o.i}`;
      }),
    );
    assert.equal(seen.size, total);
    for (const name of names) {
      const raw = await readFile(join(sub, name));
      const size = name.endsWith('.gz') ? gunzipSync(raw).length : raw.length;
      assert.ok(size <= 2000, `${name} is ${size} bytes`);
    }
  });

  it('drops the part beyond max-num-parts; part 1 is the newest', async () => {
    const sub = join(dir, 'parts');
    const path = join(sub, 'saas-app.json');
    const handler = new RotatingFileHandler({
      path,
      interval: 'daily',
      maxFileSize: 100,
      maxNumParts: 3,
      maxNumIntervals: 30,
      clock: () => new Date('2026-11-22T10:00:00Z'),
    });
    for (let i = 0; i < 10; i++) {
      handler.writeLine(JSON.stringify({ i, pad: 'y'.repeat(60) }));
      await handler.flush();
    }
    await handler.close();
    const names = (await readdir(sub)).sort();
    assert.deepEqual(names, ['saas-app.json', 'saas-app.json-2026-11-22d.1.gz', 'saas-app.json-2026-11-22d.2.gz', 'saas-app.json-2026-11-22d.3.gz']);
    const part1 = JSON.parse(gunzipSync(await readFile(join(sub, 'saas-app.json-2026-11-22d.1.gz'))).toString());
    const live = JSON.parse(await readFile(path, 'utf8'));
    assert.equal(part1.i, 8);
    assert.equal(live.i, 9);
  });

  it('rotates at a new interval (also after a restart, by the live file mtime) and keeps max-num-intervals', async () => {
    const sub = join(dir, 'intervals');
    const path = join(sub, 'saas-app.json');
    let now = new Date('2026-11-01T12:00:00Z');
    let handler = new RotatingFileHandler({ path, interval: 'daily', maxFileSize: 1_000_000, maxNumParts: 10, maxNumIntervals: 3, clock: () => now });
    for (let day = 1; day <= 6; day++) {
      now = new Date(`2026-11-0${day}T12:00:00Z`);
      handler.writeLine(JSON.stringify({ day }));
      await handler.flush();
    }
    await handler.close();
    let names = (await readdir(sub)).sort();
    assert.deepEqual(names, ['saas-app.json', 'saas-app.json-2026-11-03d.1.gz', 'saas-app.json-2026-11-04d.1.gz', 'saas-app.json-2026-11-05d.1.gz']);

    // a restart on a later day: the live file (last written on the 6th) is archived under its own day
    await utimes(path, new Date('2026-11-06T12:00:00Z'), new Date('2026-11-06T12:00:00Z'));
    now = new Date('2026-11-08T09:00:00Z');
    handler = new RotatingFileHandler({ path, interval: 'daily', maxFileSize: 1_000_000, maxNumParts: 10, maxNumIntervals: 3, clock: () => now });
    handler.writeLine(JSON.stringify({ day: 8 }));
    await handler.close();
    names = (await readdir(sub)).sort();
    assert.deepEqual(names, ['saas-app.json', 'saas-app.json-2026-11-04d.1.gz', 'saas-app.json-2026-11-05d.1.gz', 'saas-app.json-2026-11-06d.1.gz']);
    assert.equal(JSON.parse(await readFile(path, 'utf8')).day, 8);
  });

  it('goes on writing when an archive cannot be made: the rotated file stays whole beside the live one, and it is said', async () => {
    const sub = join(dir, 'archive-fails');
    const path = join(sub, 'saas-app.json');
    await mkdir(sub, { recursive: true });
    // the part the archive would replace is a directory: removing it fails
    await mkdir(archivePath(path, '2026-11-22', 'daily', 1));
    const handler = new RotatingFileHandler({
      path,
      interval: 'daily',
      maxFileSize: 100,
      maxNumParts: 1,
      maxNumIntervals: 30,
      clock: () => new Date('2026-11-22T10:00:00Z'),
    });
    const notices: string[] = [];
    handler.failures.notify = (_level, id) => notices.push(id);
    for (let i = 0; i < 4; i++) {
      handler.writeLine(JSON.stringify({ i, pad: 'z'.repeat(60) }));
      await handler.flush();
    }
    await handler.close();
    assert.ok(notices.includes('log/archive-failed'), notices.join(', '));
    const rotated = (await readdir(sub)).filter((n) => n.endsWith('.rotating')).sort();
    assert.equal(rotated.length, 3, 'each rotated file is kept');
    const kept = [...(await Promise.all(rotated.map((n) => readFile(join(sub, n), 'utf8')))), await readFile(path, 'utf8')];
    assert.deepEqual(
      kept
        .flatMap((text) => text.split('\n').filter(Boolean))
        .map((l) => JSON.parse(l).i)
        .sort(),
      [0, 1, 2, 3],
      'no line lost',
    );
  });

  it('appends to an existing live file of the current interval', async () => {
    const sub = join(dir, 'append');
    const path = join(sub, 'saas-app.json');
    await rm(sub, { recursive: true, force: true });
    await (await import('node:fs/promises')).mkdir(sub, { recursive: true });
    await writeFile(path, '{"old":true}\n');
    const handler = new RotatingFileHandler({ path, interval: 'monthly', maxFileSize: 1_000_000, maxNumParts: 10, maxNumIntervals: 3 });
    handler.writeLine('{"new":true}');
    await handler.close();
    assert.equal(await readFile(path, 'utf8'), '{"old":true}\n{"new":true}\n');
  });
});
