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
 * The holder's socket also serves the dump of the running database (`npm run db:dump`), and the
 * commands the server registers (`npm run keys:rotate`), so the directory is never opened by a
 * second process. Both sides of a dump prove they know the token
 * the holder wrote to `<dir>/.saas-lock.json` (HMACs over a fresh nonce; the token itself never
 * crosses the socket), and the directory is the owner's alone (0700): only who can read the
 * directory's files can read the database through the socket, and a process squatting the
 * socket's name can neither learn the token nor pass off its own SQL as a dump.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';

export interface LockHolder {
  pid: number;
  command: string;
}

/** Produces a plain-SQL dump of the database the lock holder has open. */
export type DumpHandler = () => Promise<string>;

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
// a holder still opening its database runs WASM start-up code that holds its event loop for seconds
const ASK_TIMEOUT_MS = 5000;

interface LockFile extends LockHolder {
  token: string;
  /** 127.0.0.1 port of the holder's socket (lock-file strategy only) */
  port?: number;
}

// A dump request proves it knows the holder's token without sending it (auth), and the holder
// proves it knows the token too (proof): a process squatting the socket's name learns nothing
// and cannot pass its own SQL off as the database's dump.
type Request = { op: 'who' } | { op: 'dump'; nonce: string; auth: string } | { op: 'command'; name: string; nonce: string; auth: string };
type Header = ({ ok: true; proof?: string } & LockHolder) | { ok: false; error: string };

const MAX_CONNECTIONS = 16;

function mac(token: string, role: 'client' | 'holder', nonce: string): string {
  return createHmac('sha256', token).update(`${role}:${nonce}`).digest('base64url');
}

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
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
  const server = net.createServer((socket) => serveConnection(socket, self, (name) => (name === undefined ? dumpHandler : commands.get(name))));
  server.maxConnections = MAX_CONNECTIONS;
  server.unref();
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
  return requestOfHolder(dir, undefined, strategy);
}

/** Asks the process holding the directory's lock to run a command it serves (`serveCommand`); its answer. */
export function requestCommand(dir: string, name: string, strategy: LockStrategy = defaultLockStrategy()): Promise<string> {
  return requestOfHolder(dir, name, strategy);
}

async function requestOfHolder(dir: string, command: string | undefined, strategy: LockStrategy): Promise<string> {
  const realDir = await realpath(dir);
  const file = await readLockFile(join(realDir, LOCK_FILE));
  const what = command ?? 'the dump';
  if (!file) throw new Error(`${realDir} is locked but ${LOCK_FILE} cannot be read: run ${what} as the user that runs the server`);
  const target = strategy === 'abstract-socket' ? socketAddress(realDir) : { host: '127.0.0.1', port: file.port ?? 0 };
  const nonce = randomBytes(16).toString('base64url');
  const auth = mac(file.token, 'client', command === undefined ? nonce : `${command}:${nonce}`);
  const request: Request = command === undefined ? { op: 'dump', nonce, auth } : { op: 'command', name: command, nonce, auth };
  const { header, body } = await exchange(target, request, 0);
  if (!header.ok) throw new Error(`The process holding ${realDir} did not ${command === undefined ? 'dump it' : `run ${command}`}: ${header.error}`);
  if (typeof header.proof !== 'string' || !sameMac(header.proof, mac(file.token, 'holder', nonce))) {
    throw new Error(`The process answering for ${realDir} could not prove it holds the directory: its answer is not used`);
  }
  return body;
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

/** One JSON request line; the answer is one JSON header line, then the body (a dump) to the end. */
function serveConnection(socket: net.Socket, self: LockFile, handler: (command?: string) => DumpHandler | undefined): void {
  socket.setTimeout(ASK_TIMEOUT_MS);
  socket.on('timeout', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  let input = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    input += chunk;
    if (input.length > 4096) return socket.destroy();
    const newline = input.indexOf('\n');
    if (newline < 0) return;
    socket.removeAllListeners('data');
    // a dump may take longer than the timeout to produce; the timeout is armed again for the
    // answer, so a peer that never closes its side does not hold the connection
    socket.setTimeout(0);
    const done = (text: string) => {
      socket.setTimeout(ASK_TIMEOUT_MS);
      socket.end(text);
    };
    void answer(input.slice(0, newline)).then(
      ({ header, body }) => done(`${JSON.stringify(header)}\n${body}`),
      (err: Error) => done(`${JSON.stringify({ ok: false, error: err.message } satisfies Header)}\n`),
    );
  });

  const holder: LockHolder = { pid: self.pid, command: self.command };
  async function answer(line: string): Promise<{ header: Header; body: string }> {
    const request = JSON.parse(line) as Request;
    if (request.op === 'who') return { header: { ok: true, ...holder }, body: '' };
    if (request.op !== 'dump' && request.op !== 'command') throw new Error('unknown request');
    const command = request.op === 'command' ? String(request.name) : undefined;
    // a command's name is part of what the client proves, so a captured request runs nothing else
    const signed = command === undefined ? request.nonce : `${command}:${request.nonce}`;
    if (typeof request.nonce !== 'string' || typeof request.auth !== 'string' || !sameMac(request.auth, mac(self.token, 'client', signed))) {
      throw new Error(`not authorised (the token is in ${LOCK_FILE} in the directory)`);
    }
    const dump = handler(command);
    if (!dump) throw new Error(`process ${self.pid} (${self.command}) does not serve ${command ?? 'dumps'}; wait until it has finished`);
    return { header: { ok: true, ...holder, proof: mac(self.token, 'holder', request.nonce) }, body: await dump() };
  }
}

async function ask(target: string | { host: string; port: number }): Promise<LockHolder> {
  const { header } = await exchange(target, { op: 'who' }, ASK_TIMEOUT_MS);
  if (!header.ok) throw new Error(header.error);
  return { pid: header.pid, command: header.command };
}

function exchange(target: string | { host: string; port: number }, request: Request, timeoutMs: number): Promise<{ header: Header; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = typeof target === 'string' ? net.connect({ path: target }) : net.connect(target);
    if (timeoutMs) socket.setTimeout(timeoutMs, () => socket.destroy(new Error('the lock holder did not answer')));
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const newline = text.indexOf('\n');
      try {
        resolve({ header: JSON.parse(newline < 0 ? text : text.slice(0, newline)) as Header, body: newline < 0 ? '' : text.slice(newline + 1) });
      } catch {
        reject(new Error('the lock holder gave no readable answer'));
      }
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
