/**
 * A real SMTP server for the mail tests (smtp-server), on 127.0.0.1: it records what it
 * receives (parsed with mailparser) and can be told to refuse the next commands with a code.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from '../support/net.js';

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  /** the AUTH user of the session, when it authenticated */
  user: string | undefined;
  parsed: ParsedMail;
}

export interface Refusal {
  stage: 'rcpt' | 'data';
  code: number;
}

export interface TestSmtpServer {
  port: number;
  /** `smtp://user:pass@127.0.0.1:<port>` */
  url: string;
  received: ReceivedMail[];
  /** the credentials clients presented */
  auths: Array<{ username: string | undefined; password: string | undefined }>;
  /** the next commands at these stages are refused, in order */
  refusals: Refusal[];
  /** refuse every RCPT with this code from now on (undefined: accept again) */
  refuseAll: number | undefined;
  listen(): Promise<void>;
  close(): Promise<void>;
}

function refusal(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export const SMTP_USER = 'mailer';
export const SMTP_PASS = 'smtp-pass-0123';

/** A server on `port` (a free one by default); call listen(). */
export async function smtpServer(port?: number): Promise<TestSmtpServer> {
  const chosen = port ?? (await freePort());
  const state: TestSmtpServer = {
    port: chosen,
    url: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${chosen}`,
    received: [],
    auths: [],
    refusals: [],
    refuseAll: undefined,
    listen: async () => undefined,
    close: async () => undefined,
  };
  const takeRefusal = (stage: Refusal['stage']): Refusal | undefined => {
    if (state.refusals[0]?.stage === stage) return state.refusals.shift();
    return undefined;
  };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 200,
    onAuth(auth, _session, cb) {
      state.auths.push({ username: auth.username ?? undefined, password: auth.password ?? undefined });
      cb(null, { user: auth.username });
    },
    onRcptTo(_address, _session, cb) {
      if (state.refuseAll) return cb(refusal(state.refuseAll, 'Recipient refused (test)'));
      const r = takeRefusal('rcpt');
      cb(r ? refusal(r.code, 'Try again later (test)') : undefined);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const r = takeRefusal('data');
        if (r) return cb(refusal(r.code, 'Message refused (test)'));
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            state.received.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((a) => a.address),
              user: typeof session.user === 'string' ? session.user : undefined,
              parsed,
            });
            cb();
          },
          (err: Error) => cb(err),
        );
      });
    },
  });
  server.on('error', () => undefined);
  state.listen = () =>
    new Promise((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(chosen, '127.0.0.1', () => resolve());
    });
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}

/**
 * A server that accepts connections and never says a word: a send to it hangs until the
 * client gives up, like an SMTP server that stopped answering mid-conversation.
 */
export async function silentServer(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `check` returns something truthy (checked every 20 ms, at most `limitMs`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, limitMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}
