/**
 * The channel to the process holding a PGlite directory's lock (lock.ts): the socket that is the
 * lock (or that the lock file names) also answers who holds it, serves the dump of the running
 * database (`npm run db:dump`) and runs the commands the server registers (`npm run
 * keys:rotate`), so the directory is never opened by a second process (docs/deployment.md).
 *
 * A request is one JSON line; the answer one JSON header line, then its body to the end. Both
 * sides of a dump or a command prove they know the token the holder wrote to the lock file (HMACs
 * over a fresh nonce; the token itself never crosses the socket), and the directory is the
 * owner's alone (0700): only who can read the directory's files can read the database through the
 * socket, and a process squatting the socket's name can neither learn the token nor pass off its
 * own SQL as a dump.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';

export interface LockHolder {
  pid: number;
  command: string;
}

/** The holder as it answers, with the token that requests and its answers prove knowledge of. */
export interface HolderIdentity extends LockHolder {
  token: string;
}

/** Produces a plain-SQL dump of the database the lock holder has open. */
export type DumpHandler = () => Promise<string>;

/** A Unix socket path (the abstract-socket strategy) or a 127.0.0.1 port (the lock-file strategy). */
export type HolderAddress = string | { host: string; port: number };

// a holder still opening its database runs WASM start-up code that holds its event loop for seconds
const ASK_TIMEOUT_MS = 5000;

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

/**
 * The holder's server (not listening yet): it answers with `handler`'s dump (no command) or
 * command; `tokenFile` names where a refused client finds the token.
 */
export function holderServer(self: HolderIdentity, tokenFile: string, handler: (command?: string) => DumpHandler | undefined): net.Server {
  const server = net.createServer((socket) => serveConnection(socket, self, tokenFile, handler));
  server.maxConnections = MAX_CONNECTIONS;
  server.unref();
  return server;
}

/** One JSON request line; the answer is one JSON header line, then the body (a dump) to the end. */
function serveConnection(socket: net.Socket, self: HolderIdentity, tokenFile: string, handler: (command?: string) => DumpHandler | undefined): void {
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
      throw new Error(`not authorised (the token is in ${tokenFile} in the directory)`);
    }
    const dump = handler(command);
    if (!dump) throw new Error(`process ${self.pid} (${self.command}) does not serve ${command ?? 'dumps'}; wait until it has finished`);
    return { header: { ok: true, ...holder, proof: mac(self.token, 'holder', request.nonce) }, body: await dump() };
  }
}

/** Who holds the lock, asked of the process listening at `target`. */
export async function ask(target: HolderAddress): Promise<LockHolder> {
  const { header } = await exchange(target, { op: 'who' }, ASK_TIMEOUT_MS);
  if (!header.ok) throw new Error(header.error);
  return { pid: header.pid, command: header.command };
}

/**
 * Asks the holder at `target` for a dump (no command) or to run `command`, proving `token`; its
 * answer, once it has proved it knows the token too. `realDir` names the directory in errors.
 */
export async function requestOfHolder(target: HolderAddress, token: string, command: string | undefined, realDir: string): Promise<string> {
  const nonce = randomBytes(16).toString('base64url');
  const auth = mac(token, 'client', command === undefined ? nonce : `${command}:${nonce}`);
  const request: Request = command === undefined ? { op: 'dump', nonce, auth } : { op: 'command', name: command, nonce, auth };
  const { header, body } = await exchange(target, request, 0);
  if (!header.ok) throw new Error(`The process holding ${realDir} did not ${command === undefined ? 'dump it' : `run ${command}`}: ${header.error}`);
  if (typeof header.proof !== 'string' || !sameMac(header.proof, mac(token, 'holder', nonce))) {
    throw new Error(`The process answering for ${realDir} could not prove it holds the directory: its answer is not used`);
  }
  return body;
}

function exchange(target: HolderAddress, request: Request, timeoutMs: number): Promise<{ header: Header; body: string }> {
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
