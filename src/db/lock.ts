/**
 * One PGlite directory belongs to one process. PGlite has no lock of its own: two processes on
 * one directory both start, both acknowledge writes, and one overwrites the other's files.
 *
 * The lock is held by the kernel so that it dies with the process (a SIGKILL leaves nothing to
 * clean by hand):
 * - Linux: a listening Unix socket in the abstract namespace named after the directory's real
 *   path. bind() is atomic: a second process gets EADDRINUSE and can connect to ask who holds it.
 * - elsewhere (macOS development): a lock file created with O_EXCL, naming a 127.0.0.1 port the
 *   holder listens on; a file whose holder no longer answers is stale and taken over.
 *
 * The holder's socket also serves the dump of the running database (`npm run db:dump`) and the
 * commands the server registers (`npm run keys:rotate`), so the directory is never opened by a
 * second process; lock-channel.ts speaks that protocol. This module finds the holder: the socket's
 * address, and `<dir>/.saas-lock.json`, which names the holder and carries the token its requests
 * prove they know.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import { join } from 'node:path';
import { ask, type DumpHandler, type HolderIdentity, holderServer, type LockHolder, requestOfHolder } from './lock-channel.js';

export interface DirectoryLock {
  /** the directory's real path */
  readonly dir: string;
  /** answers dump requests from `npm run db:dump` with this handler */
  serveDumps(handler: DumpHandler): void;
  /** answers `requestCommand(dir, name)` with this handler (its text is the answer) */
  serveCommand(name: string, handler: DumpHandler): void;
  release(): Promise<void>;
}

export type LockStrategy = 'abstract-socket' | 'lock-file';

export class DirectoryLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | undefined,
  ) {
    const who = holder ? `process ${holder.pid} (${holder.command})` : 'another process (it did not say which)';
    super(
      `The embedded database directory ${dir} is in use by ${who}. A PGlite directory belongs to one process: ` +
        'stop that process first, or use PostgreSQL (DATABASE_URL=postgres://...) to run several processes on one database.',
    );
    this.name = 'DirectoryLockedError';
  }
}

export const LOCK_FILE = '.saas-lock.json';

interface LockFile extends HolderIdentity {
  /** 127.0.0.1 port of the holder's socket (lock-file strategy only) */
  port?: number;
}

export function defaultLockStrategy(): LockStrategy {
  return process.platform === 'linux' ? 'abstract-socket' : 'lock-file';
}

/**
 * Takes the directory's lock (the directory must exist) or throws DirectoryLockedError naming
 * the holder.
 */
export async function lockDirectory(dir: string, strategy: LockStrategy = defaultLockStrategy()): Promise<DirectoryLock> {
  const realDir = await realpath(dir);
  const self: LockFile = { pid: process.pid, command: commandLine(), token: randomBytes(24).toString('base64url') };
  let dumpHandler: DumpHandler | undefined;
  const commands = new Map<string, DumpHandler>();
  const server = holderServer(self, LOCK_FILE, (name) => (name === undefined ? dumpHandler : commands.get(name)));
  const lockFile = join(realDir, LOCK_FILE);

  if (strategy === 'abstract-socket') {
    const address = socketAddress(realDir);
    try {
      await listen(server, { path: address, exclusive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      throw new DirectoryLockedError(realDir, await ask(address).catch(() => holderFromFile(lockFile)));
    }
    // informational for people, and the dump token for the CLI; the socket is the lock
    try {
      await rm(lockFile, { force: true }); // a previous holder's file may belong to another user
      await writeFile(lockFile, JSON.stringify(self), { mode: 0o600 });
    } catch (err) {
      server.close();
      throw err;
    }
  } else {
    await listen(server, { host: '127.0.0.1', port: 0, exclusive: true });
    self.port = (server.address() as net.AddressInfo).port;
    try {
      await createLockFile(lockFile, self);
    } catch (err) {
      server.close();
      throw err;
    }
  }

  let released = false;
  return {
    dir: realDir,
    serveDumps(handler) {
      dumpHandler = handler;
    },
    serveCommand(name, handler) {
      commands.set(name, handler);
    },
    async release() {
      if (released) return;
      released = true;
      // the file is removed only while it is still ours
      const current = await readLockFile(lockFile);
      if (current?.token === self.token) await rm(lockFile, { force: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The holder of the directory's lock, or undefined when no process holds it. */
export async function lockHolder(dir: string, strategy: LockStrategy = defaultLockStrategy()): Promise<LockHolder | undefined> {
  const realDir = await realpath(dir);
  if (strategy === 'abstract-socket') return ask(socketAddress(realDir)).catch(() => undefined);
  const file = await readLockFile(join(realDir, LOCK_FILE));
  return file?.port ? ask({ host: '127.0.0.1', port: file.port }).catch(() => undefined) : undefined;
}

/** Asks the process holding the directory's lock for a dump of its database. */
export function requestDump(dir: string, strategy: LockStrategy = defaultLockStrategy()): Promise<string> {
  return requestOfDirectoryHolder(dir, undefined, strategy);
}

/** Asks the process holding the directory's lock to run a command it serves (`serveCommand`); its answer. */
export function requestCommand(dir: string, name: string, strategy: LockStrategy = defaultLockStrategy()): Promise<string> {
  return requestOfDirectoryHolder(dir, name, strategy);
}

async function requestOfDirectoryHolder(dir: string, command: string | undefined, strategy: LockStrategy): Promise<string> {
  const realDir = await realpath(dir);
  const file = await readLockFile(join(realDir, LOCK_FILE));
  const what = command ?? 'the dump';
  if (!file) throw new Error(`${realDir} is locked but ${LOCK_FILE} cannot be read: run ${what} as the user that runs the server`);
  const target = strategy === 'abstract-socket' ? socketAddress(realDir) : { host: '127.0.0.1', port: file.port ?? 0 };
  return requestOfHolder(target, file.token, command, realDir);
}

function socketAddress(realDir: string): string {
  return `\0saas-pglite-${createHash('sha256').update(realDir).digest('hex')}`;
}

function commandLine(): string {
  return [process.argv0, ...process.execArgv, ...process.argv.slice(1)].join(' ');
}

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The holder named by the lock file, if that process is alive (a holder too busy to answer). */
async function holderFromFile(path: string): Promise<LockHolder | undefined> {
  const file = await readLockFile(path);
  return file && file.pid !== process.pid && isAlive(file.pid) ? { pid: file.pid, command: file.command } : undefined;
}

async function readLockFile(path: string): Promise<LockFile | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockFile;
  } catch {
    return undefined;
  }
}

/**
 * Lock-file strategy: O_EXCL create; an existing file whose holder answers means locked. A file
 * whose holder does not answer and whose pid is gone is stale: it is moved aside under a unique
 * name (only one process can move a given file), and if what was moved turns out to be a fresh
 * lock of a process that won the race meanwhile, it is linked back (link() never overwrites).
 */
async function createLockFile(path: string, self: LockFile): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await writeFile(path, JSON.stringify(self), { flag: 'wx', mode: 0o600 });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const existingText = await readFile(path, 'utf8').catch(() => undefined);
    if (existingText === undefined) continue;
    let existing: LockFile | undefined;
    try {
      existing = JSON.parse(existingText) as LockFile;
    } catch {
      existing = undefined;
    }
    if (!existing) {
      // being written by a process that has just created it
      await new Promise((r) => setTimeout(r, 50));
      if (attempt < 20) continue;
    } else {
      const holder = existing.port ? await ask({ host: '127.0.0.1', port: existing.port }).catch(() => undefined) : undefined;
      if (holder?.pid === existing.pid) throw new DirectoryLockedError(join(path, '..'), holder);
      if (isAlive(existing.pid) && existing.pid !== process.pid)
        throw new DirectoryLockedError(join(path, '..'), { pid: existing.pid, command: existing.command });
    }
    const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await rename(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const moved = await readFile(aside, 'utf8').catch(() => undefined);
    if (moved !== existingText) await link(aside, path).catch(() => undefined);
    await rm(aside, { force: true });
  }
  throw new Error(`Could not take the lock file ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
