import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import net from 'node:net';
import { openPgliteDirectory } from '../../src/db/database.js';
import { DirectoryLockedError, LOCK_FILE, lockDirectory, lockHolder, requestCommand, requestDump, type LockStrategy } from '../../src/db/lock.js';
import { logIn, signUp } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { databaseEnv, runProcess, startServer, type ServerProcess } from './processes.js';

describe('one PGlite directory, one process', () => {
  let dir: string;
  let env: Record<string, string>;
  let first: ServerProcess | undefined;
  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'saas-lock-')));
    env = databaseEnv({ pgliteDir: dir });
  });
  after(async () => {
    first?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a second server and migrate while one runs, and the first keeps every write', async () => {
    first = await startServer(env);
    const client = makeClient(first.url);
    const accounts = [];
    for (let i = 0; i < 5; i++) accounts.push(await signUp(client));

    const second = await runProcess('src/server.ts', [], env);
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, new RegExp(`directory ${dir} is in use by process ${first.child.pid} \\(.*src/server\\.ts\\)`));
    assert.match(second.stderr, /stop that process first, or use PostgreSQL/);

    const migrate = await runProcess('src/db/migrate-cli.ts', [], env);
    assert.notEqual(migrate.code, 0);
    assert.ok(migrate.stdout.includes(`${dir} is in use by process ${first.child.pid}`), migrate.stdout + migrate.stderr);

    const dev = await runProcess('scripts/dev.ts', [], env);
    assert.notEqual(dev.code, 0);
    assert.ok(dev.stderr.includes(`${dir} is in use by process ${first.child.pid}`), dev.stdout + dev.stderr);

    for (let i = 0; i < 5; i++) accounts.push(await signUp(client));
    assert.equal(await first.stop(), 0);
    first = undefined;

    const restarted = await startServer(env);
    try {
      for (const account of accounts) assert.equal((await logIn(makeClient(restarted.url), account.email)).status, 200, account.email);
    } finally {
      assert.equal(await restarted.stop(), 0);
    }
  });

  it('is free again after the holder is killed with SIGKILL', async () => {
    const holder = await startServer(env);
    const account = await signUp(makeClient(holder.url));
    assert.equal((await lockHolder(dir))?.pid, holder.child.pid);
    holder.child.kill('SIGKILL');
    await holder.exited;
    assert.equal(await lockHolder(dir), undefined);
    const next = await startServer(env);
    try {
      assert.equal((await logIn(makeClient(next.url), account.email)).status, 200);
    } finally {
      await next.stop();
    }
  });
});

describe('a process squatting the lock socket', { skip: process.platform !== 'linux' ? 'Linux only' : false }, () => {
  it('cannot pass its own SQL off as the dump: its answer carries no proof and is not used', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'saas-squat-')));
    const squatter = net.createServer((socket) => {
      socket.once('data', () => socket.end(`${JSON.stringify({ ok: true, pid: 1, command: 'fake' })}\nCREATE TABLE evil (x int);\n`));
    });
    try {
      await new Promise<void>((resolve) => squatter.listen({ path: `\0saas-pglite-${createHash('sha256').update(dir).digest('hex')}` }, resolve));
      // the stale file a killed holder left behind
      await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 4_194_305, command: 'gone', token: 'stale-token' }), { mode: 0o600 });
      await assert.rejects(requestDump(dir, 'abstract-socket'), /could not prove it holds the directory/);
    } finally {
      squatter.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the embedded database directory', () => {
  it("is the owner's alone (0700), also when it existed with wider permissions", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'saas-mode-')), 'data');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { mode: 0o755 }));
    const { pglite, lock } = await openPgliteDirectory(dir);
    try {
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
    } finally {
      await pglite.close();
      await lock.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

for (const strategy of ['abstract-socket', 'lock-file'] as LockStrategy[]) {
  describe(`the directory lock (${strategy})`, { skip: strategy === 'abstract-socket' && process.platform !== 'linux' ? 'Linux only' : false }, () => {
    let dir: string;
    before(async () => {
      dir = await realpath(await mkdtemp(join(tmpdir(), 'saas-lockfn-')));
    });
    after(async () => rm(dir, { recursive: true, force: true }));

    it('is held by exactly one of several takers racing, and free after release', async () => {
      const attempts = await Promise.allSettled(Array.from({ length: 6 }, () => lockDirectory(dir, strategy)));
      const held = attempts.filter((a) => a.status === 'fulfilled');
      assert.equal(held.length, 1);
      for (const a of attempts) {
        if (a.status === 'rejected') {
          assert.ok(a.reason instanceof DirectoryLockedError, String(a.reason));
          assert.equal(a.reason.holder?.pid, process.pid);
        }
      }
      assert.equal((await lockHolder(dir, strategy))?.pid, process.pid);
      await held[0]!.value.release();
      assert.equal(await lockHolder(dir, strategy), undefined);
      const again = await lockDirectory(dir, strategy);
      await again.release();
    });

    it('serves a dump only to a client that proves it knows the token, and the client checks the holder', async () => {
      const lock = await lockDirectory(dir, strategy);
      try {
        lock.serveDumps(async () => '-- the dump\n');
        assert.equal(await requestDump(dir, strategy), '-- the dump\n');
        // a local user who cannot read the lock file sends a made-up proof: refused
        const address =
          strategy === 'abstract-socket'
            ? { path: `\0saas-pglite-${createHash('sha256').update(dir).digest('hex')}` }
            : { host: '127.0.0.1', port: (JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { port: number }).port };
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = net.connect(address, () => socket.end(`${JSON.stringify({ op: 'dump', nonce: 'n', auth: 'guess' })}\n`));
          let text = '';
          socket.on('data', (c) => {
            text += c;
          });
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
        assert.match(answer, /"ok":false.*not authorised/);
        assert.ok(!answer.includes('the dump'));
      } finally {
        await lock.release();
      }
    });

    it('takes over a lock file left by a process that is gone', async () => {
      // pid 2^22 + 1 is above Linux's pid_max, so no process has it
      await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 4_194_305, command: 'gone', token: 'x', port: 1 }));
      const lock = await lockDirectory(dir, strategy);
      await lock.release();
    });
  });
}

describe('keys:rotate through a PGlite directory held by a server', () => {
  it('asks the holder over the lock socket, proving it knows the token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-keys-'));
    const lock = await lockDirectory(dir);
    try {
      let runs = 0;
      lock.serveCommand('keys:rotate', async () => `rotated ${++runs}`);
      assert.equal(await requestCommand(dir, 'keys:rotate'), 'rotated 1');
      await assert.rejects(requestCommand(dir, 'unknown'), /does not serve unknown/);
    } finally {
      await lock.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
